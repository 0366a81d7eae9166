using SharpFuzz;
using SieveQ.Fuzz;

// Usage:
//   SieveQ.Fuzz <target>                  under afl-fuzz (tests/fuzz/run.sh): SharpFuzz's persistent fork server
//   SieveQ.Fuzz replay <target> <file>... runs each input once and prints what it did (how run.sh reports a crash)
//   SieveQ.Fuzz seeds <corpus-root>       writes each target's seed corpus to <corpus-root>/<target>/
//   SieveQ.Fuzz list                      the targets' names
// Instrumented product code writes its coverage through SharpFuzz.Common.Trace.SharedMem, which only
// Fuzzer.Run points at afl's shared memory: until then (setting a target up, replaying an input) it is null
// and the first instrumented branch is an access violation. A scratch map takes those writes instead.
ScratchTrace.Install();

var factories = new Dictionary<string, Func<FuzzTarget>>(StringComparer.Ordinal)
{
    ["handshake"] = () => new HandshakeTarget(),
    ["subscription"] = () => new SubscriptionTarget(),
    ["id-lease"] = () => new IdLeaseTarget(),
    ["admin-command"] = () => new AdminCommandTarget(),
    ["snapshot"] = () => new SnapshotTarget(),
    ["policy-mirror"] = () => new MirrorPolicyTarget(),
    ["endpoint-policy"] = () => new EndpointPolicyTarget(),
    ["execute-result"] = () => new ExecuteResultTarget(),
    ["canary"] = () => new CanaryTarget(),
};

if (args.Length == 0)
{
    Console.Error.WriteLine("usage: SieveQ.Fuzz <target> | replay <target> <file>... | seeds <corpus-root> | list");
    return 2;
}

switch (args[0])
{
    case "list":
        foreach (var name in factories.Keys)
        {
            Console.WriteLine(name);
        }
        return 0;
    case "seeds" when args.Length == 2:
        foreach (var (name, make) in factories)
        {
            var dir = Path.Combine(args[1], name);
            Directory.CreateDirectory(dir);
            var target = make();
            var i = 0;
            foreach (var seed in target.Seeds())
            {
                // A seed must itself be a clean run, or afl-fuzz refuses to start.
                target.Run(seed);
                File.WriteAllBytes(Path.Combine(dir, $"seed-{i++:D2}"), seed);
            }
            Console.WriteLine($"{name}: {i} seeds");
        }
        return 0;
    case "replay" when args.Length >= 3 && factories.ContainsKey(args[1]):
    {
        var target = factories[args[1]]();
        var crashed = 0;
        foreach (var file in args[2..])
        {
            var input = File.ReadAllBytes(file);
            try
            {
                target.Run(input);
                Console.WriteLine($"{Path.GetFileName(file)}: no crash on replay, {target.Outcome}");
            }
#pragma warning disable CA1031 // Reporting every escaping exception is the point of replay.
            catch (Exception e)
#pragma warning restore CA1031
            {
                crashed++;
                Console.WriteLine($"{Path.GetFileName(file)}: {e.GetType().FullName}: {e.Message}");
                Console.WriteLine(e.StackTrace);
                if (e.InnerException is { } inner)
                {
                    Console.WriteLine($"  inner: {inner.GetType().FullName}: {inner.Message}");
                }
            }
        }
        return crashed == 0 ? 0 : 1;
    }
    default:
        if (args.Length != 1 || !factories.TryGetValue(args[0], out var makeTarget))
        {
            Console.Error.WriteLine($"unknown target or command '{string.Join(' ', args)}'; targets: {string.Join(", ", factories.Keys)}");
            return 2;
        }
        var fuzzed = makeTarget();
        Fuzzer.Run(stream =>
        {
            using var copy = new MemoryStream();
            stream.CopyTo(copy);
            fuzzed.Run(copy.ToArray());
        });
        return 0;
}
