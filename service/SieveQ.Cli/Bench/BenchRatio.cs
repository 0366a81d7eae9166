namespace SieveQ.Cli.Bench;

internal static class BenchRatio
{
    /// <summary>a / b, or 0 when b is not positive (a run that delivered nothing).</summary>
    public static double Of(double a, double b) => b > 0 ? a / b : 0;
}
