namespace SieveQ.Bft.Simulation.Kernel;

/// <summary>
/// A running 64-bit fingerprint of what happened, in order. Two runs of one seed must end with
/// the same value; a difference means something outside the seed leaked into the run.
/// </summary>
public sealed class TraceHash
{
    private ulong _h = 0xCBF29CE484222325UL;

    public ulong Value => _h;

    public void Add(long v)
    {
        var z = _h ^ (ulong)v;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        _h = z ^ (z >> 31);
    }

    public void Add(long a, long b, long c)
    {
        Add(a);
        Add(b);
        Add(c);
    }
}
