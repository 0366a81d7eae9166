namespace SieveQ.Controller;

/// <summary>gRPC service and method names of sieveq.v1.Controller (controller.proto is the reference).</summary>
public static class ControllerNames
{
    public const string Service = "sieveq.v1.Controller";
    public const string Health = "Health";
    public const string Status = "Status";
    public const string AuditTail = "AuditTail";
    public const string QuarantineSender = "QuarantineSender";
    public const string ReadmitSender = "ReadmitSender";
    public const string QuarantinePreSq = "QuarantinePreSq";
    public const string ReadmitPreSq = "ReadmitPreSq";
    public const string RecordConsoleChange = "RecordConsoleChange";
    public const string ReplicaNotice = "ReplicaNotice";
    public const string PushRuleSet = "PushRuleSet";
    public const string RollbackRuleSet = "RollbackRuleSet";
    public const string DryRunRuleSet = "DryRunRuleSet";
    public const string EnrolSender = "EnrolSender";
    public const string RevokeSender = "RevokeSender";
    public const string EnrolReceiver = "EnrolReceiver";
    public const string RevokeReceiver = "RevokeReceiver";
    public const string StartPreSq = "StartPreSq";
    public const string StopPreSq = "StopPreSq";
    public const string ReplacePreSq = "ReplacePreSq";
    public const string StartReplica = "StartReplica";
    public const string RecoverReplica = "RecoverReplica";
    public const string RecoverReplicas = "RecoverReplicas";

    /// <summary>What a signature names: the full method, so a signed request is good for that method only.</summary>
    public static string FullMethod(string method) => Service + "/" + method;
}
