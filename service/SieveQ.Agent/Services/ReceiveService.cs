using Microsoft.Extensions.Logging;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Agent.Services;

/// <summary>Agent.Receive: deliveries of the hosted post-SQ to the application, its commits back.</summary>
internal static class ReceiveService
{
    private static readonly TimeSpan AttachWait = TimeSpan.FromSeconds(2);

    public static async Task HandleAsync(AgentCallContext agent, GrpcServerCall<ReceiveControl, AppDelivery> call)
    {
        var caller = agent.Peers.Of(call.HttpContext);
        agent.Policy.EnsureAllowed(caller);
        var first = await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false);
        if (first?.ItemCase != ReceiveControl.ItemOneofCase.Open)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "the first message of a receive stream must be `open`");
        }
        var id = first.Open.Receiver;
        if (agent.Policy.RefuseReceiver(id, caller) is { } refusal)
        {
            agent.Log.LogWarning("refused: {Refusal}", refusal);
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, refusal);
        }
        var hosted = await AgentCallContext.StartAsync(() => agent.Receivers.GetAsync(id), "receiver", id).ConfigureAwait(false);
        using var attachment = await hosted.TryAttachAsync(AttachWait, call.CallAborted).ConfigureAwait(false)
            ?? throw new GrpcCallException(GrpcStatusCode.FailedPrecondition, $"receiver {id} already has an application stream");
        agent.Log.LogInformation("receiver {Receiver} opened by {Caller}", id, caller?.ToString() ?? "unidentified caller");
        using var streamEnded = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted);
        var commits = ReadCommitsAsync(call, hosted, streamEnded);
        try
        {
            await foreach (var m in hosted.DeliverAsync(streamEnded.Token).ConfigureAwait(false))
            {
                await call.WriteAsync(new AppDelivery { Sender = m.Sender, SenderSeq = m.SenderSeq, RouteSeq = m.RouteSeq, Data = Google.Protobuf.UnsafeByteOperations.UnsafeWrap(m.Data) }, ct: streamEnded.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (streamEnded.IsCancellationRequested && !call.CallAborted.IsCancellationRequested)
        {
            // the application closed its side: the call ends normally
        }
        await streamEnded.CancelAsync().ConfigureAwait(false);
        await commits.ConfigureAwait(false);
    }

    /// <summary>Commits until the application ends its request stream, which ends the call.</summary>
    private static async Task ReadCommitsAsync(GrpcServerCall<ReceiveControl, AppDelivery> call, Hosting.HostedReceiver hosted, CancellationTokenSource streamEnded)
    {
        try
        {
            await foreach (var c in call.ReadAllAsync(streamEnded.Token).ConfigureAwait(false))
            {
                if (c.ItemCase != ReceiveControl.ItemOneofCase.Commit)
                {
                    throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "`open` may come only once, first");
                }
                await hosted.CommitAsync(c.Commit, streamEnded.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (streamEnded.IsCancellationRequested)
        {
            return;
        }
        finally
        {
            await streamEnded.CancelAsync().ConfigureAwait(false);
        }
    }
}
