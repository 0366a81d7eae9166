using System.Security.Cryptography;
using System.Text;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Rules;
using SieveQ.Rules.Activation;
using SieveQ.Rules.Signing;

namespace SieveQ.Fuzz;

/// <summary>
/// <see cref="SieveReplicaApplication.RestoreSnapshot"/> with the rules a replica-SQ runs when the
/// deployment has a rules section (<see cref="OrderedRuleSets"/>: their state, rule-set documents
/// included, travels inside the snapshot). Each input is restored over a replica holding live state.
/// Contract: a refused snapshot throws <see cref="MalformedEnvelopeException"/> and leaves the state
/// byte for byte as it was; an accepted one is taken again identically by a fresh replica, and the
/// replica then executes a request without throwing (what it accepted must be usable state).
/// </summary>
internal sealed class SnapshotTarget : FuzzTarget
{
    private const int PreSq = 10;
    private static readonly int[] Senders = [1, 2, 3];
    private static readonly int[] Receivers = [100, 101];
    private readonly Dictionary<int, ECDsa> _senderKeys = Senders.ToDictionary(s => s, _ => ECDsa.Create(ECCurve.NamedCurves.nistP256));
    private readonly ECDsa _admin = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly PublicKeyDirectory _keys;
    private readonly CompiledRuleSet _rules;
    private readonly byte[] _live;
    private readonly ClientRequest _probe;
    private long _cid = 1000;

    public SnapshotTarget()
    {
        ECDiffieHellman Agreement() => ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var receiverKeys = Receivers.ToDictionary(r => r, _ => ECDsa.Create(ECCurve.NamedCurves.nistP256));
        var enrolment = new Enrolment(1,
            [.. Senders.Select(s => new EnrolledSender(s, $"sender{s}", _senderKeys[s].ExportSubjectPublicKeyInfo(), Agreement().ExportSubjectPublicKeyInfo()))],
            [.. Receivers.Select(r => new EnrolledReceiver(r, $"receiver{r}", receiverKeys[r].ExportSubjectPublicKeyInfo(), Agreement().ExportSubjectPublicKeyInfo()))],
            [new EnrolledPreSq(PreSq, "presq10", Agreement().ExportSubjectPublicKeyInfo()), new EnrolledPreSq(11, "presq11", Agreement().ExportSubjectPublicKeyInfo())],
            [.. Enumerable.Range(0, 4).Select(i => new EnrolledReplica(i, $"replica{i}", Agreement().ExportSubjectPublicKeyInfo()))]);
        enrolment.Validate();
        _keys = new PublicKeyDirectory(enrolment);
        _rules = RuleSetLoader.CompileUnsigned(Encoding.UTF8.GetBytes("""
            { "schema": "sieveq-ruleset/v1", "version": 1, "name": "screened",
              "patternSets": [{ "name": "bad", "literals": ["EVIL"] }],
              "rules": [{ "name": "screen", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["bad"] }] }
            """));
        var app = NewReplica();
        long seq = 0;
        foreach (var (s, r, text) in new[] { (1, 100, "hello"), (2, 101, "EVIL plan"), (3, 100, "x"), (1, 101, "again") })
        {
            app.Execute(new DecisionContext(++_cid, 1000 + _cid), [Request(++seq, Message(s, seq, r, text))]);
        }
        app.Execute(new DecisionContext(++_cid, 5000), [Request(++seq, AckRequestCodec.Encode(1, 4, 1, 1, _senderKeys[1]), LoadWarningCodec.Encode(new LoadWarning(PreSq, 1)))]);
        _live = app.TakeSnapshot();
        _probe = Request(1_000_000, Message(2, 1_000_000, 100, "probe"), Message(3, 5, 101, "EVIL"));
    }

    public override string Name => "snapshot";

    private SieveReplicaApplication NewReplica() =>
        new(_keys, new ReplicaSieveOptions(), new OrderedRuleSets(_rules, SignerKey.Of(_admin)));

    private byte[] Message(int sender, long seq, int receiver, string text) =>
        SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(sender, seq, receiver, Encoding.UTF8.GetBytes(text)), _senderKeys[sender]);

    private static ClientRequest Request(long seq, params byte[][] items) =>
        new(PreSq, seq, OrderingRequestCodec.Encode(PreSq, [.. items.Select(i => (ReadOnlyMemory<byte>)i)]));

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        var app = NewReplica();
        app.RestoreSnapshot(_live);
        try
        {
            app.RestoreSnapshot(input);
        }
        catch (MalformedEnvelopeException e)
        {
            Refused(e);
            if (!app.TakeSnapshot().AsSpan().SequenceEqual(_live))
            {
                throw new ContractViolation("a refused snapshot changed the replica's state");
            }
            return;
        }
        var taken = app.TakeSnapshot();
        var fresh = NewReplica();
        try
        {
            fresh.RestoreSnapshot(taken);
        }
        catch (MalformedEnvelopeException e)
        {
            throw new ContractViolation("a replica refused the snapshot another replica took from restored state", e);
        }
        if (!fresh.TakeSnapshot().AsSpan().SequenceEqual(taken))
        {
            throw new ContractViolation("restore then take is not the identity on a snapshot the replica took itself");
        }
        app.Execute(new DecisionContext(++_cid, 10_000), [_probe]);
    }

    public override IEnumerable<byte[]> Seeds()
    {
        yield return _live;
        yield return NewReplica().TakeSnapshot();
    }
}
