using SieveQ.Sieve.Filtering;
using SieveQ.Rules.Document;
using SieveQ.Rules.Evaluation;
using SieveQ.Rules.Formats;
using SieveQ.Rules.Matching;

namespace SieveQ.Rules;

/// <summary>How to compile: the literal engine (the KMP baseline exists for the benchmark) and a cap on the automaton's dense states (default: its memory budget).</summary>
public sealed record CompileOptions(LiteralEngine Engine = LiteralEngine.AhoCorasick, int DenseStates = int.MaxValue)
{
    public static readonly CompileOptions Default = new();
}

/// <summary>
/// Resolves every reference of a parsed document (senders, receivers, groups, topics, formats, pattern
/// sets, rates, windows, flows) and builds the evaluator's tables. Any wrong reference refuses the
/// whole document with a <see cref="RuleSetException"/> naming its JSON path.
/// </summary>
public static class RuleSetCompiler
{
    public static CompiledRuleSet Compile(RuleSetDocument doc, CompileOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(doc);
        options ??= CompileOptions.Default;
        var senders = Ids(doc.Senders, "sender");
        var receivers = Ids(doc.Receivers, "receiver");
        var groups = Groups(doc.SenderGroups, senders, "sender group", "senders", "sender");
        var topics = Groups(doc.Topics, receivers, "topic", "receivers", "receiver");

        var formats = new Dictionary<string, CompiledFormat>(StringComparer.Ordinal);
        foreach (var f in doc.Formats)
        {
            CheckUnique(formats, f.Name, f.Path, "format");
            formats.Add(f.Name, f.Kind == FormatKind.Json ? new JsonFormat(f) : new BinaryFormat(f));
        }
        var sets = IndexOf(doc.PatternSets.Select(s => (s.Name, s.Path)), "pattern set");
        var patterns = new PatternScanner(doc.PatternSets, options.Engine, options.DenseStates);
        var rateIndex = IndexOf(doc.Rates.Select(r => (r.Name, r.Path)), "rate");
        var rates = doc.Rates.Select((r, i) => new RateLimit(i, r)).ToArray();
        var windowIndex = IndexOf(doc.Windows.Select(w => (w.Name, w.Path)), "window");
        var windows = doc.Windows.Select(w => new TimeOfDayWindow(w.Name, w.Spans)).ToArray();
        var flowIndex = IndexOf(doc.Flows.Select(f => (f.Name, f.Path)), "flow");
        var flows = doc.Flows.Select((f, i) => new FlowMachine(i, f)).ToArray();

        var rules = new CompiledRule[doc.Rules.Count];
        var ruleNames = new Dictionary<string, string>(StringComparer.Ordinal);
        var byReceiver = new SortedDictionary<int, List<int>>();
        var anyReceiver = new List<int>();
        for (var i = 0; i < doc.Rules.Count; i++)
        {
            var r = doc.Rules[i];
            if (RuleDecision.BuiltInRules.Contains(r.Name))
            {
                throw Reference(r.Path + "/name", $"\"{r.Name}\" is reserved for the engine's own verdicts");
            }
            if (ruleNames.TryGetValue(r.Name, out var first))
            {
                throw Reference(r.Path + "/name", $"duplicate rule name \"{r.Name}\" (first at {first})");
            }
            ruleNames.Add(r.Name, r.Path);
            rules[i] = CompileRule(i, r, senders, receivers, groups, topics, formats, sets, rateIndex, rates, windowIndex, windows, flowIndex, flows);
            if (r.AnyReceiver)
            {
                anyReceiver.Add(i);
                continue;
            }
            var covered = new SortedSet<int>(r.ToReceivers!);
            foreach (var t in r.ToTopics!)
            {
                covered.UnionWith(topics[t]);
            }
            foreach (var receiver in covered)
            {
                if (!byReceiver.TryGetValue(receiver, out var list))
                {
                    byReceiver.Add(receiver, list = []);
                }
                list.Add(i);
            }
        }

        QuarantinePolicy? quarantine = null;
        if (doc.Quarantine is { } q)
        {
            var increments = new int[Enum.GetValues<ViolationKind>().Length];
            foreach (var (kind, weight) in q.Increments)
            {
                increments[(int)kind] = weight;
            }
            quarantine = new QuarantinePolicy(new SuspicionPolicy(q.Threshold, q.Release, q.DecayPerSecond), increments);
        }
        var summary = new RuleSetSummary(doc.Version, doc.Name, rules.Length, senders.Count, receivers.Count, topics.Count, formats.Count,
            doc.PatternSets.Count, patterns.LiteralCount, patterns.RegexCount, rates.Length, windows.Length, flows.Length, quarantine is not null);
        return new CompiledRuleSet(doc, options.Engine, rules, byReceiver.ToDictionary(kv => kv.Key, kv => kv.Value.ToArray()),
            [.. anyReceiver], patterns, rates, flows, quarantine, summary);
    }

    private static CompiledRule CompileRule(int index, RuleSpec r, HashSet<int> senders, HashSet<int> receivers,
        Dictionary<string, int[]> groups, Dictionary<string, int[]> topics, Dictionary<string, CompiledFormat> formats,
        Dictionary<string, int> sets, Dictionary<string, int> rateIndex, RateLimit[] rates, Dictionary<string, int> windowIndex,
        TimeOfDayWindow[] windows, Dictionary<string, int> flowIndex, FlowMachine[] flows)
    {
        int[]? covered = null;
        if (!r.AnySender)
        {
            var set = new SortedSet<int>();
            for (var k = 0; k < r.FromSenders!.Count; k++)
            {
                var s = r.FromSenders[k];
                if (!senders.Contains(s))
                {
                    throw Reference($"{r.Path}/from/senders/{k}", $"sender {s} is not declared in \"senders\"");
                }
                set.Add(s);
            }
            for (var k = 0; k < r.FromGroups!.Count; k++)
            {
                set.UnionWith(Resolve(groups, r.FromGroups[k], $"{r.Path}/from/groups/{k}", "sender group"));
            }
            covered = [.. set];
        }
        if (!r.AnyReceiver)
        {
            for (var k = 0; k < r.ToReceivers!.Count; k++)
            {
                if (!receivers.Contains(r.ToReceivers[k]))
                {
                    throw Reference($"{r.Path}/to/receivers/{k}", $"receiver {r.ToReceivers[k]} is not declared in \"receivers\"");
                }
            }
            for (var k = 0; k < r.ToTopics!.Count; k++)
            {
                _ = Resolve(topics, r.ToTopics[k], $"{r.Path}/to/topics/{k}", "topic");
            }
        }
        var during = (r.During ?? []).Select((w, k) => windows[Resolve(windowIndex, w, $"{r.Path}/during/{k}", "window")]).ToArray();
        var contains = Mask(r.Contains, sets, r.Path + "/contains");
        var reject = Mask(r.RejectPatterns, sets, r.Path + "/rejectPatterns");
        var format = r.Format is { } fname ? Resolve(formats, fname, r.Path + "/format", "format") : null;
        var rateList = (r.Rates ?? []).Select((n, k) => rates[Resolve(rateIndex, n, $"{r.Path}/rates/{k}", "rate")]).ToArray();
        FlowMachine? flow = null;
        if (r.Flow is { } flowName)
        {
            flow = flows[Resolve(flowIndex, flowName, r.Path + "/flow", "flow")];
            if (flow.NeedsMessageType && format is not { HasMessageType: true })
            {
                throw Reference(r.Path + "/flow", $"flow \"{flowName}\" reads message types, so the rule needs a format that declares \"messageType\"");
            }
            if (r.FlowRole == FlowRole.Response && flow.MaxOutstanding is null && !flow.HasResponseTransitions)
            {
                throw Reference(r.Path + "/flowRole", $"flow \"{flowName}\" has neither maxOutstanding nor response transitions: a response rule would check nothing");
            }
        }
        else if (r.FlowRole == FlowRole.Response)
        {
            throw Reference(r.Path + "/flowRole", "flowRole without a flow");
        }
        return new CompiledRule
        {
            Index = index,
            Name = r.Name,
            Action = r.Action,
            Senders = covered,
            During = during,
            Contains = contains,
            MaxBytes = r.MaxBytes ?? -1,
            Format = format,
            RejectPatterns = reject,
            Rates = rateList,
            Flow = flow,
            FlowRole = r.FlowRole,
            Suspicion = r.Suspicion,
        };
    }

    private static HashSet<int> Ids(IReadOnlyList<PartySpec> parties, string what)
    {
        var ids = new HashSet<int>();
        foreach (var p in parties)
        {
            if (!ids.Add(p.Id))
            {
                throw Reference(p.Path + "/id", $"{what} {p.Id} is declared twice");
            }
        }
        return ids;
    }

    private static Dictionary<string, int[]> Groups(IReadOnlyList<GroupSpec> groups, HashSet<int> declared, string what, string member, string party)
    {
        var result = new Dictionary<string, int[]>(StringComparer.Ordinal);
        foreach (var g in groups)
        {
            CheckUnique(result, g.Name, g.Path, what);
            for (var k = 0; k < g.Members.Count; k++)
            {
                if (!declared.Contains(g.Members[k]))
                {
                    throw Reference($"{g.Path}/{member}/{k}", $"{party} {g.Members[k]} is not declared in \"{member}\"");
                }
            }
            result.Add(g.Name, [.. g.Members.Order()]);
        }
        return result;
    }

    private static Dictionary<string, int> IndexOf(IEnumerable<(string Name, string Path)> items, string what)
    {
        var index = new Dictionary<string, int>(StringComparer.Ordinal);
        foreach (var (name, path) in items)
        {
            CheckUnique(index, name, path, what);
            index.Add(name, index.Count);
        }
        return index;
    }

    private static void CheckUnique<T>(Dictionary<string, T> seen, string name, string path, string what)
    {
        if (seen.ContainsKey(name))
        {
            throw Reference(path + "/name", $"duplicate {what} name \"{name}\"");
        }
    }

    private static T Resolve<T>(Dictionary<string, T> table, string name, string path, string what) =>
        table.TryGetValue(name, out var v) ? v : throw Reference(path, $"unknown {what} \"{name}\"");

    private static ulong Mask(IReadOnlyList<string>? names, Dictionary<string, int> sets, string path)
    {
        ulong mask = 0;
        for (var k = 0; k < (names?.Count ?? 0); k++)
        {
            mask |= 1UL << Resolve(sets, names![k], $"{path}/{k}", "pattern set");
        }
        return mask;
    }

    private static RuleSetException Reference(string path, string message) => new(RuleSetErrorKind.Reference, path, message);
}
