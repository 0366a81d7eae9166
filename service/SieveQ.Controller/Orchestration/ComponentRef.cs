using System.Globalization;
using SieveQ.Deployment;

namespace SieveQ.Controller.Orchestration;

/// <summary>The kinds of component an orchestrator starts and stops: pre-SQs (start, stop, replace) and replica-SQs (start, recover).</summary>
public enum ComponentKind
{
    PreSq,
    Replica,
}

/// <summary>One component of the deployment, by kind and its id in deployment.json (a pre-SQ's id is its ordering-client id).</summary>
public readonly record struct ComponentRef(ComponentKind Kind, int Id)
{
    public static ComponentRef PreSq(int id) => new(ComponentKind.PreSq, id);

    public static ComponentRef Replica(int id) => new(ComponentKind.Replica, id);

    /// <summary>As the deployment names its process and the audit log its target: "pre-sq-3", "replica-sq-0".</summary>
    public override string ToString() => Kind switch
    {
        ComponentKind.PreSq => LocalDeploymentLauncher.PreSqName(Id),
        ComponentKind.Replica => LocalDeploymentLauncher.ReplicaName(Id),
        _ => Kind.ToString().ToLowerInvariant() + "-" + Id.ToString(CultureInfo.InvariantCulture),
    };
}

/// <summary>An orchestrator could not do what it was asked; the message says why and goes into the audit log.</summary>
public sealed class OrchestratorException(string message, Exception? inner = null) : Exception(message, inner);
