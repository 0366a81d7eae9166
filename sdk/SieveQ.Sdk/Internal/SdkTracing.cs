using System.Diagnostics;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// The SDK's spans: one per batch of frames written to a pre-SQ ("sender send batch") and one per voted step
/// handed to the application ("receiver deliver"). An application's own OpenTelemetry setup takes them with
/// AddSource("SieveQ.Sdk"); unlistened, starting one is a null check.
/// </summary>
internal static class SdkTracing
{
    public const string SourceName = "SieveQ.Sdk";

    public static readonly ActivitySource Source = new(SourceName, "1.0");
}
