using SieveQ.Fuzz.Canary;

namespace SieveQ.Fuzz;

/// <summary>
/// The planted bug, outside the default list: <c>tests/fuzz/run.sh 10 canary</c> must report a crash with
/// its input and exception, which shows that afl, the instrumentation and the reporting work.
/// </summary>
internal sealed class CanaryTarget : FuzzTarget
{
    public override string Name => "canary";

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        _ = PlantedBug.Parse(input);
    }

    public override IEnumerable<byte[]> Seeds()
    {
        yield return "xxx"u8.ToArray();
    }
}
