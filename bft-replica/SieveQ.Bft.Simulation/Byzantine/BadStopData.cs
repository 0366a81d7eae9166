using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Lies to a new leader in STOPDATA: fabricated or truncated certificates, repeated signers,
/// certificates from a regency not reached, values that do not match their hash, an inflated
/// last decided instance. Re-signed with its own key so the lies reach the core's checks.
/// </summary>
internal sealed class BadStopData(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        if (o.Message is not StopData sd || !Ctx.Rng.Chance(0.9))
        {
            sink.Add(o);
            return;
        }
        var (variant, bad) = Corrupt(sd);
        Ctx.Count($"bad-stopdata.{variant}");
        sink.Add(o with { Message = bad });
    }

    private (string Variant, StopData Bad) Corrupt(StopData sd)
    {
        var rng = Ctx.Rng;
        var real = sd.Certificates.FirstOrDefault(c => c.Value is not null);
        switch (rng.Next(8))
        {
            case 0:
                return ("fabricated", Ctx.Resign(sd with { Certificates = [Fabricate(sd, 1, distinct: true)] }));
            case 1:
                return ("repeated-signers", Ctx.Resign(sd with { Certificates = [Fabricate(sd, Ctx.Config.Quorum, distinct: false)] }));
            case 2 when real is not null:
                return ("truncated", Ctx.Resign(sd with { Certificates = Replace(sd, real, real with { Writes = real.Writes.Take(Ctx.Config.Quorum - 1).ToArray() }) }));
            case 3 when real is not null:
                {
                    var other = new Batch(real.Value!.Timestamp + 1, real.Value.Requests);
                    return ("value-mismatch", Ctx.Resign(sd with { Certificates = Replace(sd, real, real with { Value = other }) }));
                }
            case 4 when real is not null:
                return ("missing-value", Ctx.Resign(sd with { Certificates = Replace(sd, real, real with { Value = null }) }));
            case 5:
                return ("future-regency-certificate", Ctx.Resign(sd with { Certificates = [Fabricate(sd, 1, distinct: true) with { Regency = sd.NewRegency + rng.Next(3) }] }));
            case 6:
                return ("inflated-last-decided", Ctx.Resign(sd with { LastDecided = sd.LastDecided + rng.Range(2, 1_000) }));
            default:
                return ("wrong-regency", Ctx.Resign(sd with { NewRegency = sd.NewRegency + 1 + rng.Next(3) }));
        }
    }

    private static PreparedCertificate[] Replace(StopData sd, PreparedCertificate old, PreparedCertificate replacement) =>
        sd.Certificates.Select(c => ReferenceEquals(c, old) ? replacement : c).ToArray();

    /// <summary>A certificate for the next instance with a hash nobody wrote, signed only by this replica (once or repeatedly).</summary>
    private PreparedCertificate Fabricate(StopData sd, int signatures, bool distinct)
    {
        var cid = sd.LastDecided + 1;
        var regency = Math.Max(0, sd.NewRegency - 1);
        var value = new Batch(Ctx.LocalNow, []);
        var hash = Ctx.Rng.Chance(0.5) ? value.Hash : Ctx.RandomDigest();
        var sig = Ctx.SignWrite(regency, cid, hash);
        var writes = Enumerable.Range(0, distinct ? 1 : signatures).Select(_ => new WriteSignature(Ctx.Self, sig)).ToArray();
        return new PreparedCertificate(cid, regency, hash, value, writes);
    }
}
