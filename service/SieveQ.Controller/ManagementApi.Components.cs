using Microsoft.AspNetCore.Routing;
using SieveQ.Controller.Access;
using SieveQ.Controller.Orchestration;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.Controller;

/// <summary>
/// StartPreSq, StopPreSq and ReplacePreSq: an administrator's direct hand on the pre-SQ processes (and StartReplica,
/// RecoverReplica and RecoverReplicas on the replica-SQs', through <see cref="ReplicaRecovery"/>), through the same
/// <see cref="AuditedOrchestration"/> as the replicas' f+1 notices (each step audited with the caller). Administrator
/// only, above the operator's quarantine: stopping a pre-SQ takes capacity away from every sender behind it, which is
/// an operator's quarantine (its senders moved first) and not a process stop. Not bounded like the automatic
/// replacements: the administrator's explicit, signed, audited request is the decision the bound waits for.
/// </summary>
public sealed partial class ManagementApi
{
    private void MapComponentCalls(IEndpointRouteBuilder routes)
    {
        MapComponentCall(routes, ControllerNames.StartPreSq, (actor, component, target) => _orchestration.StartAsync(actor, component, target));
        MapComponentCall(routes, ControllerNames.StopPreSq, (actor, component, target) => _orchestration.StopAsync(actor, component, target));
        MapComponentCall(routes, ControllerNames.ReplacePreSq, (actor, component, target) => _orchestration.ReplaceAsync(actor, component, target));
        MapReplicaCall(routes, ControllerNames.StartReplica, (actor, id, target) => _orchestration.StartAsync(actor, ComponentRef.Replica(id), target));
        MapReplicaCall(routes, ControllerNames.RecoverReplica, (actor, id, target) => _recovery.RecoverAsync(actor, id, target));
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.RecoverReplicas, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.RecoverReplicas, ManagementRole.Administrator, RecoveryRoundRequest.Parser, audited: true,
                async (caller, request, _) =>
                {
                    var reason = Reason(request.Reason);
                    var each = string.IsNullOrEmpty(reason) ? "recovery round" : "recovery round: " + reason;
                    var outcome = await _recovery.RecoverRoundAsync(caller.AuditActor, ReplicaTarget(null, reason), id => ReplicaTarget((uint)id, each)).ConfigureAwait(false);
                    return new ManagementActionReply { Applied = outcome.Done, Status = outcome.Status, AuditSequence = outcome.AuditSequence };
                }), MaxRequestBytes);
    }

    /// <summary>Start and recover of one replica: administrator only, like the pre-SQ calls (a restart takes a replica out of the quorum for its length).</summary>
    private void MapReplicaCall(IEndpointRouteBuilder routes, string method, Func<string, int, string, Task<OrchestrationOutcome>> act) =>
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, method, SignedManagementRequest.Parser,
            call => HandleAsync(call, method, ManagementRole.Administrator, ReplicaActionRequest.Parser, audited: true,
                async (caller, request, _) =>
                {
                    var reason = Reason(request.Reason);
                    if (!_recovery.Replicas.Contains((int)Math.Min(request.Replica, int.MaxValue)) && _recovery.Replicas.Count > 0)
                    {
                        throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"there is no replica-SQ {request.Replica} in the deployment");
                    }
                    if (request.Replica > int.MaxValue)
                    {
                        throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"{request.Replica} is not a valid id");
                    }
                    // The caller's token is not passed on: the steps run to their end and are recorded even if the caller hangs up.
                    var outcome = await act(caller.AuditActor, (int)request.Replica, ReplicaTarget(request.Replica, reason)).ConfigureAwait(false);
                    return new ManagementActionReply { Applied = outcome.Done, Status = outcome.Status, AuditSequence = outcome.AuditSequence };
                }), MaxRequestBytes);

    private static string Reason(string reason) => reason.Length <= MaxReasonLength
        ? reason
        : throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"the reason is limited to {MaxReasonLength} characters");

    /// <summary>"replica-SQ 2 (reason: ...)", or "every replica-SQ" for a round.</summary>
    private static string ReplicaTarget(uint? replica, string reason)
    {
        var party = replica is { } id ? $"replica-SQ {id}" : "every replica-SQ";
        return string.IsNullOrEmpty(reason) ? party : $"{party} (reason: {reason})";
    }

    private void MapComponentCall(IEndpointRouteBuilder routes, string method, Func<string, ComponentRef, string, Task<OrchestrationOutcome>> act) =>
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, method, SignedManagementRequest.Parser,
            call => HandleAsync(call, method, ManagementRole.Administrator, PreSqActionRequest.Parser, audited: true,
                (caller, request, _) => ComponentActionAsync(caller, request, act)), MaxRequestBytes);

    private static async Task<ManagementActionReply> ComponentActionAsync(CallerIdentity caller, PreSqActionRequest request,
        Func<string, ComponentRef, string, Task<OrchestrationOutcome>> act)
    {
        if (request.Reason.Length > MaxReasonLength)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"the reason is limited to {MaxReasonLength} characters");
        }
        if (request.PreSq > int.MaxValue)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"{request.PreSq} is not a valid id");
        }
        var component = ComponentRef.PreSq((int)request.PreSq);
        // The same words as quarantine-pre-sq and as a refusal's record (AuditTarget), so one search finds them all.
        var target = Target(AdminOp.QuarantinePreSq, request.PreSq, request.Reason);
        // The caller's token is not passed on: the steps run to their end and are recorded even if the caller hangs up.
        var outcome = await act(caller.AuditActor, component, target).ConfigureAwait(false);
        return new ManagementActionReply { Applied = outcome.Done, Status = outcome.Status, AuditSequence = outcome.AuditSequence };
    }
}
