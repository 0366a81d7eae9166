using SieveQ.Controller;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// The console's one way into the deployment: the controller's management API, signed with the console's own key.
/// The controller sees the console as one operator caller; which console user asked is carried in the reason, so the
/// audit record names both.
/// </summary>
public interface IControllerGateway
{
    Task<ControllerStatusReply> StatusAsync(CancellationToken ct);
    Task<AuditTailReply> AuditTailAsync(int count, CancellationToken ct);
    Task<ManagementActionReply> QuarantineSenderAsync(uint sender, string reason, CancellationToken ct);
    Task<ManagementActionReply> ReadmitSenderAsync(uint sender, string reason, CancellationToken ct);
    Task<ManagementActionReply> QuarantinePreSqAsync(uint preSq, string reason, CancellationToken ct);
    Task<ManagementActionReply> ReadmitPreSqAsync(uint preSq, string reason, CancellationToken ct);
    Task<ManagementActionReply> StartPreSqAsync(uint preSq, string reason, CancellationToken ct);
    Task<ManagementActionReply> StopPreSqAsync(uint preSq, string reason, CancellationToken ct);
    Task<ManagementActionReply> ReplacePreSqAsync(uint preSq, string reason, CancellationToken ct);
    Task<ManagementActionReply> RecoverReplicaAsync(uint replica, string reason, CancellationToken ct);
    Task<ManagementActionReply> RecoverReplicasAsync(string reason, CancellationToken ct);
    Task<ManagementActionReply> RecordConsoleChangeAsync(string action, string target, string outcome, CancellationToken ct);
    Task<ManagementActionReply> PushRuleSetAsync(ReadOnlyMemory<byte> document, ReadOnlyMemory<byte> signature, string reason, CancellationToken ct);
    Task<ManagementActionReply> RollbackRuleSetAsync(string reason, CancellationToken ct);
    Task<RuleSetDryRunReply> DryRunRuleSetAsync(RuleSetDryRunRequest request, CancellationToken ct);
    Task<ManagementActionReply> EnrolSenderAsync(EnrolSenderRequest request, CancellationToken ct);
    Task<ManagementActionReply> RevokeSenderAsync(uint sender, string reason, CancellationToken ct);
    Task<ManagementActionReply> EnrolReceiverAsync(EnrolReceiverRequest request, CancellationToken ct);
    Task<ManagementActionReply> RevokeReceiverAsync(uint receiver, string reason, CancellationToken ct);
}

public sealed class ControllerGateway(ManagementClient client) : IControllerGateway, IDisposable
{
    public Task<ControllerStatusReply> StatusAsync(CancellationToken ct) => client.StatusAsync(ct);
    public Task<AuditTailReply> AuditTailAsync(int count, CancellationToken ct) => client.AuditTailAsync(count, ct);
    public Task<ManagementActionReply> QuarantineSenderAsync(uint sender, string reason, CancellationToken ct) => client.QuarantineSenderAsync(sender, reason, ct);
    public Task<ManagementActionReply> ReadmitSenderAsync(uint sender, string reason, CancellationToken ct) => client.ReadmitSenderAsync(sender, reason, ct);
    public Task<ManagementActionReply> QuarantinePreSqAsync(uint preSq, string reason, CancellationToken ct) => client.QuarantinePreSqAsync(preSq, reason, ct);
    public Task<ManagementActionReply> ReadmitPreSqAsync(uint preSq, string reason, CancellationToken ct) => client.ReadmitPreSqAsync(preSq, reason, ct);
    public Task<ManagementActionReply> StartPreSqAsync(uint preSq, string reason, CancellationToken ct) =>
        client.PreSqLifecycleAsync(ControllerNames.StartPreSq, preSq, reason, ct);
    public Task<ManagementActionReply> StopPreSqAsync(uint preSq, string reason, CancellationToken ct) =>
        client.PreSqLifecycleAsync(ControllerNames.StopPreSq, preSq, reason, ct);
    public Task<ManagementActionReply> ReplacePreSqAsync(uint preSq, string reason, CancellationToken ct) =>
        client.PreSqLifecycleAsync(ControllerNames.ReplacePreSq, preSq, reason, ct);
    public Task<ManagementActionReply> RecoverReplicaAsync(uint replica, string reason, CancellationToken ct) =>
        client.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, replica, reason, ct);
    public Task<ManagementActionReply> RecoverReplicasAsync(string reason, CancellationToken ct) => client.RecoverReplicasAsync(reason, ct);
    public Task<ManagementActionReply> RecordConsoleChangeAsync(string action, string target, string outcome, CancellationToken ct) =>
        client.RecordConsoleChangeAsync(action, target, outcome, ct);
    public Task<ManagementActionReply> PushRuleSetAsync(ReadOnlyMemory<byte> document, ReadOnlyMemory<byte> signature, string reason, CancellationToken ct) =>
        client.PushRuleSetAsync(document, signature, reason, ct);
    public Task<ManagementActionReply> RollbackRuleSetAsync(string reason, CancellationToken ct) => client.RollbackRuleSetAsync(reason, ct);
    public Task<RuleSetDryRunReply> DryRunRuleSetAsync(RuleSetDryRunRequest request, CancellationToken ct) => client.DryRunRuleSetAsync(request, ct);
    public Task<ManagementActionReply> EnrolSenderAsync(EnrolSenderRequest request, CancellationToken ct) => client.EnrolSenderAsync(request, ct);
    public Task<ManagementActionReply> RevokeSenderAsync(uint sender, string reason, CancellationToken ct) => client.RevokeSenderAsync(sender, reason, ct);
    public Task<ManagementActionReply> EnrolReceiverAsync(EnrolReceiverRequest request, CancellationToken ct) => client.EnrolReceiverAsync(request, ct);
    public Task<ManagementActionReply> RevokeReceiverAsync(uint receiver, string reason, CancellationToken ct) => client.RevokeReceiverAsync(receiver, reason, ct);
    public void Dispose() => client.Dispose();
}
