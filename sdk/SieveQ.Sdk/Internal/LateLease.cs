using Microsoft.Extensions.Logging;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// For a sender or receiver that started without its id's lease because the deployment did not answer (the agent does
/// this so that it keeps accepting messages while the deployment is away): asks for the lease every
/// <c>retryEvery</c> until the deployment answers, then holds the party under it. Another holder, or a refusal, stops
/// the party with that error rather than let two processes act under one id. Ends when the party is disposed.
/// </summary>
internal static partial class LateLease
{
    public static async Task TakeAsync(SieveQClientConfiguration config, string party, int id, string stateDir, ILogger log, TimeSpan retryEvery,
        Func<IdLeaseKeeper, Exception?> hold, Action<Exception> halt, CancellationToken stopping)
    {
        while (true)
        {
            IdLeaseKeeper lease;
            try
            {
                await Task.Delay(retryEvery, stopping).ConfigureAwait(false);
                lease = await IdLeaseKeeper.AcquireAsync(config, party, id, stateDir, log, stopping).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
            catch (ConnectUnconfirmedException)
            {
                continue;
            }
            catch (Exception e) when (e is IdHeldException or SieveQConfigurationException)
            {
                LogStopped(log, party, id, e.Message);
                halt(e);
                return;
            }
            if (stopping.IsCancellationRequested)
            {
                await lease.DisposeAsync().ConfigureAwait(false);
                return;
            }
            if (hold(lease) is { } conflict)
            {
                LogStopped(log, party, id, conflict.Message);
                halt(conflict);
                return;
            }
            LogTaken(log, party, id);
            return;
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "{Party} {Id} now holds its id lease (it had started without one)")]
    private static partial void LogTaken(ILogger log, string party, int id);

    [LoggerMessage(Level = LogLevel.Error, Message = "{Party} {Id} stops: {Reason}")]
    private static partial void LogStopped(ILogger log, string party, int id, string reason);
}
