using System.Security.Cryptography;
using Google.Protobuf;
using SieveQ.Controller.Access;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SieveQ.Transport.Tls;

namespace SieveQ.Controller;

/// <summary>
/// A management caller: signs each request with its private key (fresh timestamp and random nonce) and calls the
/// controller over the project's gRPC transport. The key id is derived from the key, so only the key file is needed.
/// </summary>
public sealed class ManagementClient : IDisposable
{
    private readonly GrpcChannel _channel;
    private readonly ECDsa _key;
    private readonly TimeProvider _time;

    /// <param name="pin">The controller's TLS key pin, for an https:// <paramref name="controller"/>.</param>
    public ManagementClient(Uri controller, ECDsa key, TimeProvider? time = null, TlsPin? pin = null)
    {
        ArgumentNullException.ThrowIfNull(key);
        _channel = GrpcChannel.ForAddress(controller, pin, ManagementApi.MaxRuleSetRequestBytes * 4);
        _key = key;
        _time = time ?? TimeProvider.System;
        KeyId = ManagementSignature.KeyIdOf(key.ExportSubjectPublicKeyInfo());
    }

    public string KeyId { get; }

    public Task<ControllerStatusReply> StatusAsync(CancellationToken ct = default) =>
        CallAsync(ControllerNames.Status, new ControllerStatusRequest(), ControllerStatusReply.Parser, ct);

    public Task<AuditTailReply> AuditTailAsync(int count, CancellationToken ct = default) =>
        CallAsync(ControllerNames.AuditTail, new AuditTailRequest { Count = (uint)Math.Max(0, count) }, AuditTailReply.Parser, ct);

    public Task<ManagementActionReply> QuarantineSenderAsync(uint sender, string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.QuarantineSender, new SenderActionRequest { Sender = sender, Reason = reason }, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> ReadmitSenderAsync(uint sender, string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.ReadmitSender, new SenderActionRequest { Sender = sender, Reason = reason }, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> QuarantinePreSqAsync(uint preSq, string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.QuarantinePreSq, new PreSqActionRequest { PreSq = preSq, Reason = reason }, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> ReadmitPreSqAsync(uint preSq, string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.ReadmitPreSq, new PreSqActionRequest { PreSq = preSq, Reason = reason }, ManagementActionReply.Parser, ct);

    /// <summary>An administrator's StartPreSq, StopPreSq or ReplacePreSq (<paramref name="method"/>, one of <see cref="ControllerNames"/>).</summary>
    public Task<ManagementActionReply> PreSqLifecycleAsync(string method, uint preSq, string reason, CancellationToken ct = default) =>
        method is ControllerNames.StartPreSq or ControllerNames.StopPreSq or ControllerNames.ReplacePreSq
            ? CallAsync(method, new PreSqActionRequest { PreSq = preSq, Reason = reason }, ManagementActionReply.Parser, ct)
            : throw new ArgumentException($"{method} is not a pre-SQ lifecycle call", nameof(method));

    /// <summary>StartReplica or RecoverReplica of one replica-SQ.</summary>
    public Task<ManagementActionReply> ReplicaLifecycleAsync(string method, uint replica, string reason, CancellationToken ct = default) =>
        method is ControllerNames.StartReplica or ControllerNames.RecoverReplica
            ? CallAsync(method, new ReplicaActionRequest { Replica = replica, Reason = reason }, ManagementActionReply.Parser, ct)
            : throw new ArgumentException($"{method} is not a replica lifecycle call", nameof(method));

    /// <summary>A recovery round over every replica-SQ; returns when the round is over (several seconds per replica).</summary>
    public Task<ManagementActionReply> RecoverReplicasAsync(string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.RecoverReplicas, new RecoveryRoundRequest { Reason = reason }, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> RecordConsoleChangeAsync(string action, string target, string outcome, CancellationToken ct = default) =>
        CallAsync(ControllerNames.RecordConsoleChange, new ConsoleChangeRequest { Action = action, Target = target, Outcome = outcome }, ManagementActionReply.Parser, ct);

    /// <summary>A replica-SQ's report of a notice its agreed execution produced (the caller's key must be pinned with role replica).</summary>
    public Task<ManagementActionReply> ReplicaNoticeAsync(string action, uint subject, long agreedTimeMs, CancellationToken ct = default) =>
        CallAsync(ControllerNames.ReplicaNotice, new ReplicaNoticeRequest { Action = action, Subject = subject, AgreedTimeMs = agreedTimeMs }, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> PushRuleSetAsync(ReadOnlyMemory<byte> document, ReadOnlyMemory<byte> signature, string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.PushRuleSet, new RuleSetPushRequest { Document = ByteString.CopyFrom(document.Span), Signature = ByteString.CopyFrom(signature.Span), Reason = reason },
            ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> RollbackRuleSetAsync(string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.RollbackRuleSet, new RuleSetRollbackRequest { Reason = reason }, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> EnrolSenderAsync(EnrolSenderRequest request, CancellationToken ct = default) =>
        CallAsync(ControllerNames.EnrolSender, request, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> RevokeSenderAsync(uint sender, string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.RevokeSender, new SenderActionRequest { Sender = sender, Reason = reason }, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> EnrolReceiverAsync(EnrolReceiverRequest request, CancellationToken ct = default) =>
        CallAsync(ControllerNames.EnrolReceiver, request, ManagementActionReply.Parser, ct);

    public Task<ManagementActionReply> RevokeReceiverAsync(uint receiver, string reason, CancellationToken ct = default) =>
        CallAsync(ControllerNames.RevokeReceiver, new ReceiverActionRequest { Receiver = receiver, Reason = reason }, ManagementActionReply.Parser, ct);

    public Task<RuleSetDryRunReply> DryRunRuleSetAsync(RuleSetDryRunRequest request, CancellationToken ct = default) =>
        CallAsync(ControllerNames.DryRunRuleSet, request, RuleSetDryRunReply.Parser, ct);

    /// <summary>Signs <paramref name="body"/> for <paramref name="method"/> (exposed so tests can replay or tamper with a request).</summary>
    public SignedManagementRequest Sign(string method, IMessage body)
    {
        ArgumentNullException.ThrowIfNull(body);
        var bytes = body.ToByteArray();
        var nonce = RandomNumberGenerator.GetBytes(ManagementSignature.NonceBytes);
        var timestamp = _time.GetUtcNow().ToUnixTimeMilliseconds();
        var signature = _key.SignData(ManagementSignature.SignedBytes(ControllerNames.FullMethod(method), bytes, timestamp, nonce),
            HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        return new SignedManagementRequest
        {
            KeyId = KeyId,
            TimestampMs = timestamp,
            Nonce = ByteString.CopyFrom(nonce),
            Body = ByteString.CopyFrom(bytes),
            Signature = ByteString.CopyFrom(signature),
        };
    }

    /// <summary>Sends an already signed (or deliberately unsigned) request as it is.</summary>
    public Task<TReply> SendAsync<TReply>(string method, SignedManagementRequest request, MessageParser<TReply> parser, CancellationToken ct = default)
        where TReply : class, IMessage<TReply> =>
        _channel.UnaryAsync<SignedManagementRequest, TReply>(ControllerNames.Service, method, request, parser, ct);

    private Task<TReply> CallAsync<TReply>(string method, IMessage body, MessageParser<TReply> parser, CancellationToken ct)
        where TReply : class, IMessage<TReply> =>
        SendAsync(method, Sign(method, body), parser, ct);

    public void Dispose() => _channel.Dispose();
}
