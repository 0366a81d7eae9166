using System.Diagnostics.Metrics;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// The sender's and receiver's figures (their Stats) on the "SieveQ.Sdk" meter, as observable instruments read at
/// collection, so the hot path counts nothing twice. One meter per sender or receiver, disposed with it.
/// </summary>
internal static class SdkMetrics
{
    public const string MeterName = "SieveQ.Sdk";

    public static Meter Observe(SieveQSender sender)
    {
        var meter = new Meter(MeterName, "1.0");
        var tag = new KeyValuePair<string, object?>("sender", sender.Id);
        meter.CreateObservableCounter("sieveq.sdk.sent", () => new Measurement<long>(sender.Stats.Accepted, tag), "{message}", "Messages the application handed to the sender-SQ");
        meter.CreateObservableCounter("sieveq.sdk.acknowledged", () => new Measurement<long>(sender.AcknowledgedUpTo, tag), "{message}",
            "The highest sequence number acknowledged by f+1 replicas (its rate is the acknowledged messages/s)");
        meter.CreateObservableCounter("sieveq.sdk.frames_dropped", () => new Measurement<long>(sender.Stats.FramesDropped, tag), "{frame}",
            "Frames dropped from a full or broken pre-SQ link queue (retransmitted later)");
        meter.CreateObservableCounter("sieveq.sdk.retransmissions", () => new Measurement<long>(sender.Stats.Retransmissions, tag), "{message}", "Messages retransmitted");
        meter.CreateObservableCounter("sieveq.sdk.frames_held_for_lease", () => new Measurement<long>(sender.FramesHeldForLease, tag), "{frame}",
            "Frames not sent because the sender's id lease could not be renewed in time (sent again once it is)");
        meter.CreateObservableUpDownCounter("sieveq.sdk.outstanding", () => new Measurement<long>(sender.Stats.Outstanding, tag), "{message}", "Messages sent and not yet acknowledged");
        return meter;
    }

    public static Meter Observe(SieveQReceiver receiver)
    {
        var meter = new Meter(MeterName, "1.0");
        var tag = new KeyValuePair<string, object?>("receiver", receiver.Id);
        meter.CreateObservableCounter("sieveq.sdk.delivered", () => new Measurement<long>(receiver.Stats.Delivered, tag), "{message}",
            "Messages voted by f+1 replicas and handed to the application, in order");
        meter.CreateObservableCounter("sieveq.sdk.outputs_rejected", () => new Measurement<long>(receiver.Stats.OutputsRejected, tag), "{frame}",
            "Replica outputs the post-SQ rejected (bad MAC, malformed)");
        return meter;
    }
}
