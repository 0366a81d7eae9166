namespace SieveQ.Telemetry;

/// <summary>
/// Which meters and activity sources are SieveQ's: every one is named "SieveQ.&lt;part&gt;" (SieveQ.PreSq,
/// SieveQ.Bft.Replica, ...), so one wildcard takes the meters of every project, including ones added later.
/// </summary>
public static class SieveQTelemetrySources
{
    public const string MeterPattern = "SieveQ.*";

    public const string ActivitySourcePattern = "SieveQ.*";
}
