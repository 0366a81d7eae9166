using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Hides one client's requests from its own core, wherever they arrive (directly, forwarded, or
/// carried by a STOP), so as leader it never proposes them. Followers must time out and replace it.
/// </summary>
internal sealed class CensoringReplica(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    private int Victim => Ctx.Assignment.CensoredClient;

    public override BftMessage? OnInput(BftMessage message)
    {
        switch (message)
        {
            case ClientRequest r when r.From == Victim:
                Ctx.Count("censor.hidden");
                return null;
            case Forward f when f.Requests.Any(r => r.From == Victim):
                {
                    Ctx.Count("censor.hidden");
                    var kept = f.Requests.Where(r => r.From != Victim).ToArray();
                    return kept.Length == 0 ? null : f with { Requests = kept };
                }
            case Stop s when s.TimedOut.Any(r => r.From == Victim):
                Ctx.Count("censor.hidden");
                return s with { TimedOut = s.TimedOut.Where(r => r.From != Victim).ToArray() };
            default:
                return message;
        }
    }
}
