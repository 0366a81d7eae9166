using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// A small enrolled deployment held in memory: f = 1 (4 replicas), senders 1-3, receivers 100-101,
/// pre-SQs 10-11, every key generated once per test class, and helpers to build valid traffic.
/// </summary>
public sealed class TestWorld : IDisposable
{
    public const int F = 1;
    public const int N = 4;
    public static readonly int[] SenderIds = [1, 2, 3];
    public static readonly int[] ReceiverIds = [100, 101];
    public static readonly int[] PreSqIds = [10, 11];

    public Dictionary<int, ECDsa> SenderSigning { get; } = [];
    public Dictionary<int, ECDiffieHellman> SenderAgreement { get; } = [];
    public Dictionary<int, ECDsa> ReceiverSigning { get; } = [];
    public Dictionary<int, ECDiffieHellman> ReceiverAgreement { get; } = [];
    public Dictionary<int, ECDiffieHellman> PreSqAgreement { get; } = [];
    public Dictionary<int, ECDiffieHellman> ReplicaAgreement { get; } = [];
    public Enrolment Enrolment { get; }
    public PublicKeyDirectory Keys { get; }

    private readonly Dictionary<(int, int), MacKeyRing> _senderPreSq = [];
    private readonly Dictionary<(int, int), MacKeyRing> _replicaReceiver = [];
    private readonly Dictionary<(int, int), MacKeyRing> _replicaSender = [];

    public TestWorld()
    {
        foreach (var s in SenderIds)
        {
            SenderSigning[s] = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            SenderAgreement[s] = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        }
        foreach (var r in ReceiverIds)
        {
            ReceiverSigning[r] = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            ReceiverAgreement[r] = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        }
        foreach (var p in PreSqIds)
        {
            PreSqAgreement[p] = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        }
        for (var i = 0; i < N; i++)
        {
            ReplicaAgreement[i] = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        }
        Enrolment = new Enrolment(F,
            SenderIds.Select(s => new EnrolledSender(s, $"sender{s}", SenderSigning[s].ExportSubjectPublicKeyInfo(), SenderAgreement[s].ExportSubjectPublicKeyInfo())).ToList(),
            ReceiverIds.Select(r => new EnrolledReceiver(r, $"receiver{r}", ReceiverSigning[r].ExportSubjectPublicKeyInfo(), ReceiverAgreement[r].ExportSubjectPublicKeyInfo())).ToList(),
            PreSqIds.Select(p => new EnrolledPreSq(p, $"presq{p}", PreSqAgreement[p].ExportSubjectPublicKeyInfo())).ToList(),
            Enumerable.Range(0, N).Select(i => new EnrolledReplica(i, $"replica{i}", ReplicaAgreement[i].ExportSubjectPublicKeyInfo())).ToList());
        Enrolment.Validate();
        Keys = new PublicKeyDirectory(Enrolment);
    }

    /// <summary>The (sender, pre-SQ) ring, derived from the sender's side.</summary>
    public MacKeyRing SenderPreSqRing(int sender, int preSq)
    {
        if (!_senderPreSq.TryGetValue((sender, preSq), out var ring))
        {
            ring = MacKeyDerivation.Ring(MacChannel.SenderPreSq, sender, preSq, 1, SenderAgreement[sender], PreSqAgreement[preSq].ExportSubjectPublicKeyInfo());
            _senderPreSq[(sender, preSq)] = ring;
        }
        return ring;
    }

    public MacKeyRing ReplicaReceiverRing(int replica, int receiver)
    {
        if (!_replicaReceiver.TryGetValue((replica, receiver), out var ring))
        {
            ring = MacKeyDerivation.Ring(MacChannel.ReplicaReceiver, replica, receiver, 1, ReplicaAgreement[replica], ReceiverAgreement[receiver].ExportSubjectPublicKeyInfo());
            _replicaReceiver[(replica, receiver)] = ring;
        }
        return ring;
    }

    public MacKeyRing ReplicaSenderRing(int replica, int sender)
    {
        if (!_replicaSender.TryGetValue((replica, sender), out var ring))
        {
            ring = MacKeyDerivation.Ring(MacChannel.ReplicaSender, replica, sender, 1, ReplicaAgreement[replica], SenderAgreement[sender].ExportSubjectPublicKeyInfo());
            _replicaSender[(replica, sender)] = ring;
        }
        return ring;
    }

    /// <summary>A sender message with its own signature.</summary>
    public byte[] Message(int sender, long seq, int receiver, byte[] data) =>
        SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(sender, seq, receiver, data), SenderSigning[sender]);

    public byte[] Message(int sender, long seq, int receiver, string text) => Message(sender, seq, receiver, System.Text.Encoding.UTF8.GetBytes(text));

    public byte[] Frame(int sender, int preSq, byte[] body) => SenderFrameCodec.Encode(preSq, body, SenderPreSqRing(sender, preSq));

    public static ClientRequest Request(int preSq, long seq, params byte[][] items) =>
        new(preSq, seq, OrderingRequestCodec.Encode(preSq, items.Select(i => (ReadOnlyMemory<byte>)i).ToList()));

    public static RoutePolicy AllRoutes(int maxBytes = 1 << 20) =>
        new(SenderIds.SelectMany(s => ReceiverIds.Select(r => new Route(s, r, maxBytes))));

    public SieveReplicaApplication Replica(ReplicaSieveOptions? options = null, IApplicationRules? rules = null) =>
        new(Keys, options ?? new ReplicaSieveOptions(), rules ?? AllRoutes());

    public static DecisionContext At(long cid, long timeMs) => new(cid, timeMs);

    public void Dispose()
    {
        Keys.Dispose();
        foreach (var k in SenderSigning.Values.Concat(ReceiverSigning.Values))
        {
            k.Dispose();
        }
        foreach (var k in SenderAgreement.Values.Concat(ReceiverAgreement.Values).Concat(PreSqAgreement.Values).Concat(ReplicaAgreement.Values))
        {
            k.Dispose();
        }
    }

    /// <summary>The administrator command's result every replica gave: they must all be the same bytes.</summary>
    public static AdminCommandResult AgreedAdminResult(List<byte[]> replies)
    {
        ArgumentNullException.ThrowIfNull(replies);
        Assert.All(replies, r => Assert.Equal(replies[0], r));
        return AdminCommandResultCodec.Decode(replies[0]);
    }

    /// <summary>The execution result every replica gave: they must all be the same bytes.</summary>
    public static ExecuteResult AgreedExecuteResult(List<byte[]> replies)
    {
        ArgumentNullException.ThrowIfNull(replies);
        Assert.All(replies, r => Assert.Equal(replies[0], r));
        return ExecuteResultCodec.Decode(replies[0]);
    }
}
