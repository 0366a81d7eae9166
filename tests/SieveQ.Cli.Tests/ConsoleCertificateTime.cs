namespace SieveQ.Cli.Tests;

/// <summary>A clock a test moves by hand, for certificates that are months from their renewal.</summary>
internal sealed class ConsoleCertificateTime(DateTimeOffset start) : TimeProvider
{
    public DateTimeOffset Now { get; set; } = start;

    public override DateTimeOffset GetUtcNow() => Now;
}
