namespace SieveQ.Sieve.Envelope;

/// <summary>
/// WARNREQ <c>&lt;preSq, loadIndex&gt;</c>: a pre-SQ telling the replicas it is near capacity.
/// <see cref="LoadPermille"/> is its load estimate in thousandths of capacity (1000 = full). It rides
/// in an ordering request, whose origin the ordering layer authenticates, so it carries no MAC.
/// </summary>
public sealed record LoadWarning(int PreSq, int LoadPermille);

/// <summary>Layout: <c>u8 kind=0x03 | u32 preSq | u32 loadPermille</c>.</summary>
public static class LoadWarningCodec
{
    public const int Size = 9;

    public static byte[] Encode(LoadWarning warning)
    {
        ArgumentNullException.ThrowIfNull(warning);
        using var w = new CanonicalWriter(Size);
        w.U8((byte)StructureKind.LoadWarning);
        w.Id(warning.PreSq);
        w.Id(warning.LoadPermille);
        return w.ToArray();
    }

    public static LoadWarning Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.LoadWarning);
        var preSq = r.Id("preSq");
        var load = r.Id("loadPermille");
        r.End("WARNREQ");
        return new LoadWarning(preSq, load);
    }
}
