using Microsoft.AspNetCore.Routing;
using SieveQ.Controller.Access;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.Controller;

/// <summary>
/// EnrolSender and RevokeSender: the changes `sieveq enrol sender|revoke` make with the administrator key directly,
/// here checked, audited and ordered through the same submitter as quarantines (ops 5 and 6, signed under the
/// enrolment domain). An enrolment is checked before anything is ordered (id, name, both keys one P-256
/// SubjectPublicKeyInfo each, the proof of possession), so a malformed request costs the deployment nothing; the
/// replicas check it again and decide whether the id is free.
/// </summary>
public sealed partial class ManagementApi
{
    private void MapEnrolmentCalls(IEndpointRouteBuilder routes)
    {
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.EnrolSender, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.EnrolSender, ManagementRole.Operator, EnrolSenderRequest.Parser, audited: true, EnrolSenderAsync), MaxRequestBytes);
        MapPartyAction(routes, ControllerNames.RevokeSender, SenderActionRequest.Parser, r => (AdminOp.RevokeSender, r.Sender, r.Reason));
    }

    private async Task<ManagementActionReply> EnrolSenderAsync(CallerIdentity caller, EnrolSenderRequest request, CancellationToken ct)
    {
        const string action = "enrol-sender";
        CheckReason(request.Reason);
        var target = EnrolmentTarget(request);
        if (EnrolmentProblem(request) is { } problem)
        {
            await _audit.AppendAsync(caller.AuditActor, action, target, "refused: " + problem, ct).ConfigureAwait(false);
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "enrolment refused: " + problem);
        }
        if (_commands is null)
        {
            var unapplied = await _audit.AppendAsync(caller.AuditActor, action, target, NoCommandKey, ct).ConfigureAwait(false);
            return new ManagementActionReply { Applied = false, Status = NoCommandKey, AuditSequence = unapplied.Sequence };
        }
        await _audit.AppendAsync(caller.AuditActor, action, target, "submitted to the ordering", ct).ConfigureAwait(false);
        var claim = new SenderEnrolmentClaim(request.Name, request.SignaturePublicKey.Memory, request.AgreementPublicKey.Memory, request.Proof.Memory);
        // The outcome is recorded even when the caller hangs up: the command may have been applied.
        var outcome = await _commands.EnrolSenderAsync((int)request.Sender, claim, CancellationToken.None).ConfigureAwait(false);
        var status = outcome.Applied ? $"{outcome.Status} (agreed by f+1 replicas, via {outcome.Via})" : outcome.Status;
        var record = await _audit.AppendAsync(caller.AuditActor, action, target, Truncate((outcome.Applied ? "applied: " : "not applied: ") + status, 1000),
            CancellationToken.None).ConfigureAwait(false);
        return new ManagementActionReply { Applied = outcome.Applied, Status = status, AuditSequence = record.Sequence };
    }

    /// <summary>Why the request cannot be an enrolment, or null; the order of the checks names the first thing wrong.</summary>
    internal static string? EnrolmentProblem(EnrolSenderRequest request)
    {
        if (request.Sender > int.MaxValue)
        {
            return $"{request.Sender} is not a sender id (0 for the next free id, or 1 to {int.MaxValue})";
        }
        if (EnrolmentProof.NameProblem(request.Name) is { } name)
        {
            return name;
        }
        if (request.SignaturePublicKey.Length is 0 or > EnrolmentProof.MaxKeyBytes || request.AgreementPublicKey.Length is 0 or > EnrolmentProof.MaxKeyBytes)
        {
            return $"each public key is a SubjectPublicKeyInfo of 1 to {EnrolmentProof.MaxKeyBytes} bytes";
        }
        return EnrolmentProof.Problem(new SenderEnrolmentClaim(request.Name, request.SignaturePublicKey.Memory, request.AgreementPublicKey.Memory, request.Proof.Memory));
    }

    /// <summary>The sender as the audit record names it: id, name (only when it is a valid one: it is the requester's text) and signing key id.</summary>
    private static string EnrolmentTarget(EnrolSenderRequest request)
    {
        var id = request.Sender == 0 ? "sender (next free id)" : $"sender {request.Sender}";
        var name = EnrolmentProof.NameProblem(request.Name) is null ? $"'{request.Name}'" : "(malformed name)";
        var key = request.SignaturePublicKey.Length is > 0 and <= EnrolmentProof.MaxKeyBytes
            ? "signing key " + ManagementSignature.KeyIdOf(request.SignaturePublicKey.ToByteArray())
            : "no usable signing key";
        return WithReason($"{id} {name}, {key}", request.Reason);
    }
}
