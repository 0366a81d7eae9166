using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Faults;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>The behaviours planned for one Byzantine replica, chained: each sees what the previous one let through.</summary>
internal sealed class ByzantineNode
{
    private readonly List<ByzantineBehaviour> _behaviours;

    public ByzantineNode(ByzantineContext context)
    {
        Context = context;
        _behaviours = context.Assignment.Kinds.Select(k => Create(k, context)).ToList();
        WantsTicks = context.Assignment.Kinds.Any(k => k is ByzantineKind.Replay or ByzantineKind.ForgeSignatures or ByzantineKind.FloodFuture or ByzantineKind.FloodState or ByzantineKind.ForgeRequests);
    }

    public ByzantineContext Context { get; }
    public bool WantsTicks { get; }

    private static ByzantineBehaviour Create(ByzantineKind kind, ByzantineContext ctx) => kind switch
    {
        ByzantineKind.Equivocate => new EquivocatingLeader(ctx),
        ByzantineKind.Silent => new SilentReplica(ctx),
        ByzantineKind.Censor => new CensoringReplica(ctx),
        ByzantineKind.SlowLeader => new SlowLeader(ctx),
        ByzantineKind.Mutate => new MessageMutator(ctx),
        ByzantineKind.BadStopData => new BadStopData(ctx),
        ByzantineKind.BadSync => new BadSync(ctx),
        ByzantineKind.Replay => new Replayer(ctx),
        ByzantineKind.ForgeSignatures => new SignatureForger(ctx),
        ByzantineKind.FloodFuture => new FutureFlooder(ctx),
        ByzantineKind.FloodState => new StateRequestFlooder(ctx),
        ByzantineKind.BadTimestamps => new BadTimestamps(ctx),
        ByzantineKind.ForgeRequests => new RequestForger(ctx),
        ByzantineKind.BadChunks => new BadChunkServer(ctx),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "no behaviour for this kind"),
    };

    public BftMessage? Input(BftMessage message)
    {
        Context.RememberInbound(message);
        BftMessage? m = message;
        foreach (var b in _behaviours)
        {
            m = b.OnInput(m);
            if (m is null)
            {
                return null;
            }
        }
        return m;
    }

    public List<Outgoing> Output(Outgoing o)
    {
        if (o.Message is { } original)
        {
            Context.RememberOutbound(original);
        }
        var current = new List<Outgoing> { o };
        foreach (var b in _behaviours)
        {
            var next = new List<Outgoing>(current.Count);
            foreach (var x in current)
            {
                b.OnOutput(x, next);
            }
            current = next;
        }
        return current;
    }

    public List<Outgoing> Tick()
    {
        var sink = new List<Outgoing>();
        foreach (var b in _behaviours)
        {
            b.OnTick(sink);
        }
        return sink;
    }
}
