using System.Globalization;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Tests.Core;

namespace SieveQ.Bft.Tests.Scenarios;

/// <summary>
/// Real <see cref="ReplicaCore"/>s on a network the script drives by hand: nothing moves unless a command
/// delivers it, and time only advances by <c>tick</c>. Messages are checked as a host would (signatures)
/// before a core steps them. Commands, with arguments as key=value (lists comma-separated):
/// <list type="bullet">
/// <item><c>cluster n=4 [checkpoint=64]</c>: new cores at time 0.</item>
/// <item><c>request client=1000 seq=1 [to=0,1]</c>: a client's request reaches the replicas (all by default).</item>
/// <item><c>tick ms=200</c>: time advances and every core ticks.</item>
/// <item><c>deliver [from=..] [to=..] [type=..]</c>: the matching messages in flight arrive, in order; what they cause waits in flight.</item>
/// <item><c>drop [from=..] [to=..] [type=..]</c>: the matching messages in flight are lost.</item>
/// <item><c>stabilize [quiet]</c>: delivers until nothing is in flight.</item>
/// <item><c>isolate 0</c> / <c>heal 0</c>: messages to or from the replica are lost while isolated.</item>
/// <item><c>tamper-sync from=1</c>: the SYNCs in flight from the replica carry a forged prior value.</item>
/// <item><c>step-down 0</c>: the replica is told to step down (a planned stop of the leader); prints whether it asked.</item>
/// <item><c>in-flight</c>, <c>status</c>, <c>counters r=2 prefix=sync.</c>: what is there to see.</item>
/// </list>
/// Outputs print one per line in <see cref="ScenarioText"/>'s form; a command with nothing to print prints "ok".
/// </summary>
internal sealed class ScenarioCluster
{
    private readonly ScenarioText _text = new();
    private readonly List<(int To, BftMessage Message)> _inFlight = [];
    private readonly HashSet<int> _isolated = [];
    private ReplicaConfig _config = new();
    private HmacProofs _proofs = new(4);
    private ReplicaCore[] _cores = [];
    private long _now;

    public List<string> Run(string command)
    {
        var words = command.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        var args = words.Skip(1).Where(w => w.Contains('=', StringComparison.Ordinal))
            .ToDictionary(w => w[..w.IndexOf('=', StringComparison.Ordinal)], w => w[(w.IndexOf('=', StringComparison.Ordinal) + 1)..]);
        var flags = words.Skip(1).Where(w => !w.Contains('=', StringComparison.Ordinal)).ToList();
        var output = new List<string>();
        switch (words[0])
        {
            case "cluster":
                StartCluster(args);
                break;
            case "request":
                Request(args, output);
                break;
            case "tick":
                Tick(Number(args, "ms"), output);
                break;
            case "deliver":
                Deliver(Matching(args), output);
                break;
            case "drop":
                var lost = Matching(args);
                output.Add($"dropped {lost.Count}");
                break;
            case "stabilize":
                Stabilize(flags.Contains("quiet") ? null : output);
                break;
            case "isolate":
                _isolated.Add(int.Parse(flags[0], CultureInfo.InvariantCulture));
                break;
            case "heal":
                _isolated.Remove(int.Parse(flags[0], CultureInfo.InvariantCulture));
                break;
            case "tamper-sync":
                TamperSync((int)Number(args, "from"), output);
                break;
            case "step-down":
                var who = int.Parse(flags[0], CultureInfo.InvariantCulture);
                var asked = _cores[who].StepDown(_now);
                Collect(who, output);
                if (!asked)
                {
                    output.Add($"{who} is not leading: nothing asked");
                }
                break;
            case "in-flight":
                output.AddRange(_inFlight.Select(m => $"{m.Message.From} -> {m.To} {_text.Message(m.Message)}"));
                break;
            case "status":
                output.AddRange(_cores.Select(Status));
                break;
            case "counters":
                var counters = _cores[(int)Number(args, "r")].Counters.Snapshot();
                var prefix = args.GetValueOrDefault("prefix", "");
                output.AddRange(counters.Where(kv => kv.Key.StartsWith(prefix, StringComparison.Ordinal)).Select(kv => $"{kv.Key} = {kv.Value}"));
                break;
            default:
                throw new FormatException($"unknown command '{words[0]}'");
        }
        return output.Count == 0 ? ["ok"] : output;
    }

    private static long Number(Dictionary<string, string> args, string key) =>
        args.TryGetValue(key, out var v) ? long.Parse(v, CultureInfo.InvariantCulture) : throw new FormatException($"missing {key}=");

    private static HashSet<int>? Set(Dictionary<string, string> args, string key) =>
        args.TryGetValue(key, out var v) ? v.Split(',').Select(x => int.Parse(x, CultureInfo.InvariantCulture)).ToHashSet() : null;

    private void StartCluster(Dictionary<string, string> args)
    {
        _config = new ReplicaConfig
        {
            N = args.TryGetValue("n", out var n) ? int.Parse(n, CultureInfo.InvariantCulture) : 4,
            CheckpointInterval = args.TryGetValue("checkpoint", out var k) ? int.Parse(k, CultureInfo.InvariantCulture) : 64,
        };
        _proofs = new HmacProofs(_config.N);
        _cores = Enumerable.Range(0, _config.N).Select(i => new ReplicaCore(_config, i, new ChainApp(), _proofs.SignerFor(i))).ToArray();
        _inFlight.Clear();
        _isolated.Clear();
        _now = 0;
    }

    private void Request(Dictionary<string, string> args, List<string> output)
    {
        var seq = Number(args, "seq");
        var request = new ClientRequest((int)Number(args, "client"), seq, [(byte)seq]);
        var to = Set(args, "to");
        for (var r = 0; r < _config.N; r++)
        {
            if (to is null || to.Contains(r))
            {
                _cores[r].Step(request, _now);
                Collect(r, output);
            }
        }
    }

    private void Tick(long ms, List<string> output)
    {
        _now += ms;
        for (var r = 0; r < _config.N; r++)
        {
            _cores[r].Tick(_now);
            Collect(r, output);
        }
    }

    /// <summary>Takes the matching messages out of flight, in the order they were sent.</summary>
    private List<(int To, BftMessage Message)> Matching(Dictionary<string, string> args)
    {
        var from = Set(args, "from");
        var to = Set(args, "to");
        var type = args.GetValueOrDefault("type");
        var taken = _inFlight.Where(m => (from is null || from.Contains(m.Message.From)) && (to is null || to.Contains(m.To))
            && (type is null || ScenarioText.TypeName(m.Message) == type)).ToList();
        foreach (var m in taken)
        {
            _inFlight.Remove(m);
        }
        return taken;
    }

    private void Deliver(List<(int To, BftMessage Message)> messages, List<string>? output)
    {
        foreach (var (to, m) in messages)
        {
            if (_isolated.Contains(to) || _isolated.Contains(m.From) || !ProofCheck.VerifySignatures(m, _proofs, _config.N))
            {
                continue;
            }
            _cores[to].Step(m, _now);
            Collect(to, output);
        }
    }

    private void Stabilize(List<string>? output)
    {
        for (var round = 0; _inFlight.Count > 0; round++)
        {
            if (round > 1_000)
            {
                throw new InvalidOperationException("messages still in flight after 1000 rounds");
            }
            var all = _inFlight.ToList();
            _inFlight.Clear();
            Deliver(all, output);
        }
    }

    private void TamperSync(int from, List<string> output)
    {
        for (var i = 0; i < _inFlight.Count; i++)
        {
            if (_inFlight[i].Message is Sync s && s.From == from)
            {
                var forged = new Batch(s.Value?.Timestamp ?? 0, [new ClientRequest(6666, 1, [6])]);
                _inFlight[i] = (_inFlight[i].To, s with { PriorValue = forged });
                output.Add($"{from} -> {_inFlight[i].To} {_text.Message(_inFlight[i].Message)}");
            }
        }
    }

    private void Collect(int replica, List<string>? output)
    {
        foreach (var o in _cores[replica].DrainOutputs())
        {
            switch (o)
            {
                case SendToReplicas b:
                    for (var r = 0; r < _config.N; r++)
                    {
                        if (r != replica)
                        {
                            _inFlight.Add((r, b.Message));
                        }
                    }
                    break;
                case SendTo s when s.To < _config.N:
                    _inFlight.Add((s.To, s.Message));
                    break;
            }
            // Described even when not printed, so batches and states are named in the order they appear.
            if (_text.Output(replica, o) is { } line)
            {
                output?.Add(line);
            }
        }
    }

    private string Status(ReplicaCore core, int replica) =>
        $"{replica}: regency {core.Regency} {(core.Mode == ReplicaMode.Normal ? "normal" : "changing")} decided i{core.LastDecided} "
        + $"checkpoint i{core.LastCheckpointId} pending {core.PendingRequests}{(core.IsTransferringState ? " transferring" : "")}{(_isolated.Contains(replica) ? " isolated" : "")}";
}
