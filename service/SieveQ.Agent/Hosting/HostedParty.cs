using Microsoft.Extensions.Logging;
using SieveQ.Sdk;

namespace SieveQ.Agent.Hosting;

/// <summary>
/// How the agent starts a sender or receiver it hosts: connected (the running deployment confirms the enrolment and
/// grants the id's lease, so an application holding the same id, or another agent, is refused with the holder named),
/// or, when the deployment does not answer in time, from the deployment's files without a lease, so the agent keeps
/// accepting messages (the sender's outbox holds them) while the deployment is away; it then takes the lease as soon as
/// the deployment answers (<paramref name="leaseLater"/>), and stops the party if another process holds the id by then.
/// </summary>
internal static partial class HostedParty
{
    public static async Task<T> StartAsync<T>(string role, int id, ILogger log, Func<Task<T>> connect, Func<T> create, Func<T, Task> leaseLater)
    {
        try
        {
            return await connect().ConfigureAwait(false);
        }
        catch (ConnectUnconfirmedException e)
        {
            LogUnconfirmed(log, role, id, e.Message);
            var party = create();
            // Runs until it holds the lease or the party is disposed; it handles its own failures.
            _ = leaseLater(party);
            return party;
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "{Role} {Id} started without the deployment's confirmation and without an id lease ({Reason}); it takes the lease once the deployment answers, and another process could use the id meanwhile")]
    private static partial void LogUnconfirmed(ILogger log, string role, int id, string reason);
}
