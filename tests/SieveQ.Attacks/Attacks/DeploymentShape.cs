namespace SieveQ.Attacks.Attacks;

/// <summary>What an attack needs from the deployment before it is launched.</summary>
/// <param name="ExtraSenders">Enrolled senders besides the legitimate ones (a compromised sender's identity).</param>
/// <param name="CompromisedPreSq">A pre-SQ started as <see cref="CompromisedPreSqProcess"/> with this stage, instead of `sieveq pre-sq`.</param>
/// <param name="PreSqOptions">Further `sieveq pre-sq` options for every pre-SQ.</param>
/// <param name="CompromisedReplica">A replica-SQ started as <see cref="CompromisedReplicaSqProcess"/>, instead of `sieveq replica-sq`.</param>
internal sealed record DeploymentShape(IReadOnlyList<int> ExtraSenders, (int Id, string Stage)? CompromisedPreSq, IReadOnlyList<string> PreSqOptions,
    int? CompromisedReplica = null)
{
    public static readonly DeploymentShape AsUp = new([], null, []);

    /// <summary>
    /// One deployment that serves every attack of a run: the senders of all, the one compromised pre-SQ and replica-SQ
    /// they need (each misbehaves only while its attack's switch is on), the pre-SQ options they set. Throws
    /// <see cref="FormatException"/> naming the two kinds when they need the same component in different ways (a
    /// compromised pre-SQ in two stages, two different sets of pre-SQ options): those run in separate runs.
    /// </summary>
    public static DeploymentShape Union(IReadOnlyList<(string Kind, DeploymentShape Shape)> shapes)
    {
        var union = AsUp;
        string? preSqBy = null, optionsBy = null, replicaBy = null;
        foreach (var (kind, shape) in shapes)
        {
            if (shape.CompromisedPreSq is { } p)
            {
                union = union.CompromisedPreSq is { } q && q != p
                    ? throw Conflict(preSqBy!, kind, $"pre-SQ {q.Id} compromised as {q.Stage}, pre-SQ {p.Id} as {p.Stage}")
                    : union with { CompromisedPreSq = p };
                preSqBy ??= kind;
            }
            if (shape.PreSqOptions.Count > 0)
            {
                union = union.PreSqOptions.Count > 0 && !union.PreSqOptions.SequenceEqual(shape.PreSqOptions, StringComparer.Ordinal)
                    ? throw Conflict(optionsBy!, kind, $"pre-SQ options {string.Join(' ', union.PreSqOptions)} and {string.Join(' ', shape.PreSqOptions)}")
                    : union with { PreSqOptions = shape.PreSqOptions };
                optionsBy ??= kind;
            }
            if (shape.CompromisedReplica is { } r)
            {
                union = union.CompromisedReplica is { } s && s != r
                    ? throw Conflict(replicaBy!, kind, $"replica-SQ {s} and replica-SQ {r} compromised")
                    : union with { CompromisedReplica = r };
                replicaBy ??= kind;
            }
            union = union with { ExtraSenders = [.. union.ExtraSenders.Union(shape.ExtraSenders)] };
        }
        return union;
    }

    private static FormatException Conflict(string first, string second, string what) =>
        new($"--kind {first},{second}: they cannot share a deployment ({what}); run them in separate runs");
}
