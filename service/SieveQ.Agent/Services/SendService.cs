using Microsoft.Extensions.Logging;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Agent.Services;

/// <summary>Agent.Send: an application's messages into the hosted sender-SQ of the sender it opened.</summary>
internal static class SendService
{
    private const int MaxInFlight = 256;

    public static async Task HandleAsync(AgentCallContext agent, GrpcServerCall<AppSend, SendProgress> call)
    {
        var caller = agent.Peers.Of(call.HttpContext);
        agent.Policy.EnsureAllowed(caller);
        var first = await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false);
        if (first?.ItemCase != AppSend.ItemOneofCase.Open)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "the first message of a send stream must be `open`");
        }
        var id = first.Open.Sender;
        if (agent.Policy.RefuseSender(id, caller) is { } refusal)
        {
            agent.Log.LogWarning("refused: {Refusal}", refusal);
            await call.WriteAsync(new SendProgress { Error = refusal }, ct: call.CallAborted).ConfigureAwait(false);
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, refusal);
        }
        var sender = await AgentCallContext.StartAsync(() => agent.Senders.GetAsync(id), "sender", id).ConfigureAwait(false);
        agent.Log.LogInformation("sender {Sender} opened by {Caller}", id, caller?.ToString() ?? "unidentified caller");
        var progress = new SendProgressReporter(call, sender);
        var input = ReadMessagesAsync(call, sender, progress);
        var reporting = progress.RunAsync(input, call.CallAborted);
        await input.ConfigureAwait(false);
        await reporting.ConfigureAwait(false);
    }

    /// <summary>
    /// Hands messages to the sender-SQ without waiting for each one's number before reading the next:
    /// up to <see cref="MaxInFlight"/> are queued at once (the sender's queue keeps their order), so a
    /// stream is not limited to one round trip through the sender's pump per message. A message the sender
    /// refuses at the call is reported on the stream, which goes on.
    /// </summary>
    private static async Task ReadMessagesAsync(GrpcServerCall<AppSend, SendProgress> call, Sdk.Sender.SieveQSender sender, SendProgressReporter progress)
    {
        var inFlight = new Queue<Task<Sdk.Sender.SentMessage?>>();
        long index = 0;
        try
        {
            await foreach (var m in call.ReadAllAsync(call.CallAborted).ConfigureAwait(false))
            {
                if (m.ItemCase != AppSend.ItemOneofCase.Message)
                {
                    throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "`open` may come only once, first");
                }
                index++;
                // Waits while the sender's window is full; HTTP/2 flow control then holds the application back.
                inFlight.Enqueue(SendOneAsync(sender, m.Message, index, progress, call.CallAborted));
                while (inFlight.Count > 0 && (inFlight.Peek().IsCompleted || inFlight.Count >= MaxInFlight))
                {
                    await AcceptedAsync(inFlight.Dequeue(), progress).ConfigureAwait(false);
                }
            }
            while (inFlight.Count > 0)
            {
                await AcceptedAsync(inFlight.Dequeue(), progress).ConfigureAwait(false);
            }
        }
        catch (ArgumentException e)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, e.Message);
        }
    }

    /// <summary>Runs synchronously up to the sender's own queueing, so messages keep the stream's order.</summary>
    private static async Task<Sdk.Sender.SentMessage?> SendOneAsync(Sdk.Sender.SieveQSender sender, OutgoingMessage m, long index, SendProgressReporter progress, CancellationToken ct)
    {
        try
        {
            var sent = await sender.SendAsync(m.Receiver, m.Data.Memory, ct).ConfigureAwait(false);
            _ = ReportOutcomeAsync(sent, index, progress);
            return sent;
        }
        catch (Sdk.Sender.SendRefusedException e)
        {
            progress.Refused(index, e);
            return null;
        }
        catch (Exception e) when (e is Sdk.IdHeldException || e.InnerException is Sdk.IdHeldException or Sdk.SieveQConfigurationException)
        {
            // The hosted sender stopped for a reason the application can act on (the id taken by another process).
            throw new GrpcCallException(GrpcStatusCode.FailedPrecondition, e.Message);
        }
    }

    private static async Task AcceptedAsync(Task<Sdk.Sender.SentMessage?> sending, SendProgressReporter progress)
    {
        if (await sending.ConfigureAwait(false) is { } sent)
        {
            progress.Accepted(sent.Seq);
        }
    }

    private static async Task ReportOutcomeAsync(Sdk.Sender.SentMessage sent, long index, SendProgressReporter progress)
    {
        try
        {
            progress.Ended(index, await sent.Outcome.ConfigureAwait(false));
        }
#pragma warning disable CA1031 // the outcome faults with whatever stopped the sender (disposal, a failed pump); the sender logged it
        catch (Exception)
#pragma warning restore CA1031
        {
            // The sender stopped first: this stream ends with the call.
            progress.Abandoned();
        }
    }
}
