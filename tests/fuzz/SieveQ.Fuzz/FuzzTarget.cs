namespace SieveQ.Fuzz;

/// <summary>
/// One parser under fuzzing. <see cref="Run"/> returns when the input was accepted or refused the way the
/// parser documents; any other exception (or a broken invariant, thrown as <see cref="ContractViolation"/>)
/// escapes to SharpFuzz, which reports it to afl-fuzz as a crash.
/// </summary>
internal abstract class FuzzTarget
{
    public abstract string Name { get; }

    /// <summary>Small valid inputs made with the real encoders: the seed corpus.</summary>
    public abstract IEnumerable<byte[]> Seeds();

    /// <summary>Runs one input; <see cref="Outcome"/> then tells how it ended.</summary>
    public abstract void Run(byte[] input);

    /// <summary>"accepted", or the refusal and its message: what replay prints, to see how deep inputs get.</summary>
    public string Outcome { get; protected set; } = "";

    protected void Refused(Exception e) => Outcome = $"refused: {e.GetType().Name}: {e.Message}";

    protected void Refused(string why) => Outcome = $"refused: {why}";
}

/// <summary>A parser broke a promise other than "refuse with the documented exception" (state half-restored, no round trip...).</summary>
internal sealed class ContractViolation : Exception
{
    public ContractViolation(string message) : base(message) { }

    public ContractViolation() { }

    public ContractViolation(string message, Exception inner) : base(message, inner) { }
}

/// <summary>Reads an input front to back; short reads give what is left, so truncation is part of the search space.</summary>
internal sealed class Cursor(byte[] data)
{
    private int _at;

    public int Remaining => data.Length - _at;

    public byte[] Take(int count)
    {
        var n = Math.Min(count, Remaining);
        var result = data.AsSpan(_at, n).ToArray();
        _at += n;
        return result;
    }

    public int U8() => Remaining > 0 ? data[_at++] : 0;

    public int U16() => U8() | (U8() << 8);

    public byte[] Rest() => Take(Remaining);
}
