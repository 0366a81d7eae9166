namespace SieveQ.Core.Envelope;

/// <summary>
/// What the replicas agree to tell a pre-SQ about one of its ordering requests: how many items were
/// accepted (passed every check), held in the reorder buffer, or dropped. The pre-SQ takes it once
/// f+1 replicas return the same bytes.
/// </summary>
public sealed record ExecuteResult(int Accepted, int Held, int Dropped);

/// <summary>Layout: <c>u8 kind=0x11 | u32 accepted | u32 held | u32 dropped</c>.</summary>
public static class ExecuteResultCodec
{
    public static byte[] Encode(ExecuteResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        using var w = new CanonicalWriter(13);
        w.U8((byte)StructureKind.ExecuteResult);
        w.Id(result.Accepted);
        w.Id(result.Held);
        w.Id(result.Dropped);
        return w.ToArray();
    }

    public static ExecuteResult Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.ExecuteResult);
        var result = new ExecuteResult(r.Id("accepted"), r.Id("held"), r.Id("dropped"));
        r.End("execute result");
        return result;
    }
}
