namespace SieveQ.Protocol;

/// <summary>gRPC service and method names of sieveq.v1 (as in the .proto files, which are the reference).</summary>
public static class ProtocolNames
{
    public const string PreSqService = "sieveq.v1.PreSq";
    public const string ReplicaSqService = "sieveq.v1.ReplicaSq";
    public const string AgentService = "sieveq.v1.Agent";

    public const string Exchange = "Exchange";
    public const string Acknowledge = "Acknowledge";
    public const string Health = "Health";
    public const string Subscribe = "Subscribe";
    public const string FetchBodies = "FetchBodies";
    public const string AckResponses = "AckResponses";
    public const string Enrolment = "Enrolment";
    public const string Send = "Send";
    public const string Receive = "Receive";
    public const string SubmitRuleSetCommand = "SubmitRuleSetCommand";
    public const string SubmitAdminCommand = "SubmitAdminCommand";
    public const string SubmitIdLease = "SubmitIdLease";
}
