using System.Diagnostics.Metrics;

namespace SieveQ.Sdk.Sender;

/// <summary>The <c>SieveQ.Sdk</c> meter's count of message outcomes over every sender of the process, by outcome.</summary>
internal static class SenderOutcomeMetrics
{
    private static readonly Meter Meter = new("SieveQ.Sdk");
    private static readonly Counter<long> Outcomes = Meter.CreateCounter<long>("sieveq.sdk.sender.outcomes", "{message}",
        "messages that ended for their sender, by outcome (delivered, rejected, timed_out, verdict_unknown)");

    public static void Count(MessageOutcomeKind kind) => Outcomes.Add(1, new KeyValuePair<string, object?>("outcome", kind switch
    {
        MessageOutcomeKind.Delivered => "delivered",
        MessageOutcomeKind.Rejected => "rejected",
        MessageOutcomeKind.TimedOut => "timed_out",
        _ => "verdict_unknown",
    }));
}
