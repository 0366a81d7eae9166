namespace SieveQ.Controller.Replicas;

/// <summary>The actions a replica notice names on the wire (controller.proto, ReplicaNoticeRequest.action).</summary>
public static class ReplicaNoticeActions
{
    public const string RemovePreSq = "remove-pre-sq";
    public const string AddPreSq = "add-pre-sq";
    public const string SenderQuarantined = "sender-quarantined";
}
