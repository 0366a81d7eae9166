using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace SieveQ.Sieve.Filtering;

/// <summary>
/// The core's instruments, on one <see cref="Meter"/> named "SieveQ.Sieve" that hosts export
/// (dotnet-counters, OpenTelemetry). Tags: component (sender-sq, pre-sq, replica-sq, post-sq),
/// stage and reason. Pure classes report here instead of logging.
/// </summary>
public static class SieveMetrics
{
    public const string MeterName = "SieveQ.Sieve";

    public static readonly Meter Meter = new(MeterName, "1.0");

    public static readonly Counter<long> Drops = Meter.CreateCounter<long>("sieveq.drops", "{message}", "Inputs dropped, by component, stage and reason");

    public static readonly Counter<long> Passed = Meter.CreateCounter<long>("sieveq.passed", "{message}", "Inputs that passed a component's checks");

    public static void Drop(string component, SieveStage stage, DropReason reason, long count = 1)
    {
        if (Drops.Enabled)
        {
            Drops.Add(count, new TagList { { "component", component }, { "stage", StageName(stage) }, { "reason", ReasonName(reason) } });
        }
    }

    public static readonly Counter<long> AdminCommands = Meter.CreateCounter<long>("sieveq.admin_commands", "{command}", "Administrator commands executed, by component and outcome (applied, refused)");

    public static void AdminCommand(string component, bool applied)
    {
        if (AdminCommands.Enabled)
        {
            AdminCommands.Add(1, new TagList { { "component", component }, { "outcome", applied ? "applied" : "refused" } });
        }
    }

    public static readonly Counter<long> EnrolmentChanges = Meter.CreateCounter<long>("sieveq.enrolment_changes", "{change}", "Senders enrolled or revoked through the ordering, by component and change (enrol, revoke)");

    public static void EnrolmentChange(string component, bool enrolled) =>
        EnrolmentChanges.Add(1, new KeyValuePair<string, object?>("component", component), new KeyValuePair<string, object?>("change", enrolled ? "enrol" : "revoke"));

    public static readonly Counter<long> RouteChanges = Meter.CreateCounter<long>("sieveq.route_changes", "{change}", "Fixed routes allowed or removed through the ordering, by component and change (allow, remove)");

    public static void RouteChange(string component, bool allowed) =>
        RouteChanges.Add(1, new KeyValuePair<string, object?>("component", component), new KeyValuePair<string, object?>("change", allowed ? "allow" : "remove"));

    public static void Pass(string component, long count = 1)
    {
        if (Passed.Enabled)
        {
            Passed.Add(count, new KeyValuePair<string, object?>("component", component));
        }
    }

    // Cached names: Enum.ToString allocates on every call.
    private static readonly string[] StageNames = Enum.GetNames<SieveStage>();
    private static readonly string[] ReasonNames = Enum.GetNames<DropReason>();

    private static string StageName(SieveStage s) => (int)s < StageNames.Length ? StageNames[(int)s] : s.ToString();

    private static string ReasonName(DropReason r) => (int)r < ReasonNames.Length ? ReasonNames[(int)r] : r.ToString();
}
