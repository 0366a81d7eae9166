using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Id leases decided in agreed execution: every replica answers the same bytes; a hold is granted when the id is free,
/// expired or already the claimant's, and otherwise names the holder; a release frees only the claimant's own lease;
/// a forged, stale, replayed or stranger's request is refused and changes nothing; the table survives a snapshot.
/// </summary>
public sealed class IdLeaseExecutionTests(TestWorld w) : IClassFixture<TestWorld>, IDisposable
{
    private const int Carrier = 10;
    private static readonly long Start = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    private readonly List<IDisposable> _owned = [];
    private readonly byte[] _alice = RandomNumberGenerator.GetBytes(IdLeaseCodec.HolderBytes);
    private readonly byte[] _bob = RandomNumberGenerator.GetBytes(IdLeaseCodec.HolderBytes);
    private long _cid;
    private long _seq;

    public void Dispose()
    {
        foreach (var d in _owned)
        {
            d.Dispose();
        }
    }

    private List<SieveReplicaApplication> Replicas() => Enumerable.Range(0, TestWorld.N).Select(_ =>
    {
        var directory = new PublicKeyDirectory(w.Enrolment);
        _owned.Add(directory);
        return new SieveReplicaApplication(directory, new ReplicaSieveOptions(),
            new RoutePolicy(TestWorld.SenderIds.SelectMany(s => TestWorld.ReceiverIds.Select(r => new Route(s, r, 1 << 20)))));
    }).ToList();

    private byte[] Request(LeaseOp op, byte[] holder, string label, long at, int sender = 1, ECDsa? key = null) =>
        IdLeaseCodec.EncodeRequest(LeaseParty.Sender, sender, op, holder, label, at, key ?? w.SenderSigning[sender]);

    /// <summary>Orders <paramref name="item"/> at agreed time <paramref name="now"/> on every replica; their results must be byte-identical.</summary>
    private IdLeaseResult Order(List<SieveReplicaApplication> replicas, byte[] item, long now)
    {
        var request = new ClientRequest(Carrier, ++_seq, OrderingRequestCodec.Encode(Carrier, [item]));
        var context = new DecisionContext(++_cid, now);
        var results = replicas.Select(r => r.Execute(context, [request]).Replies[0]).ToList();
        Assert.All(results, r => Assert.Equal(results[0], r));
        return IdLeaseCodec.DecodeResult(results[0]);
    }

    [Fact]
    public void A_free_id_is_granted_a_second_holder_is_told_who_holds_it_and_a_release_frees_it()
    {
        var replicas = Replicas();
        var granted = Order(replicas, Request(LeaseOp.Hold, _alice, "alice", Start), Start);
        Assert.Equal(LeaseOutcome.Granted, granted.Outcome);
        Assert.Equal(Start + IdLeaseTable.TermMs, granted.ExpiresAtMs);

        var held = Order(replicas, Request(LeaseOp.Hold, _bob, "bob", Start + 1_000), Start + 1_000);
        Assert.Equal(LeaseOutcome.HeldByOther, held.Outcome);
        Assert.Equal("alice", held.Label);
        Assert.Equal(_alice, held.Holder.ToArray());
        Assert.Contains("sender 1 is held by alice for 29 s more", held.Reason, StringComparison.Ordinal);

        // Bob cannot release Alice's lease; Alice renews (a later expiry), then releases, and Bob takes it at once.
        Assert.Contains("not held by this holder", Order(replicas, Request(LeaseOp.Release, _bob, "bob", Start + 2_000), Start + 2_000).Reason, StringComparison.Ordinal);
        Assert.Equal(Start + 5_000 + IdLeaseTable.TermMs, Order(replicas, Request(LeaseOp.Hold, _alice, "alice", Start + 5_000), Start + 5_000).ExpiresAtMs);
        Assert.Equal(LeaseOutcome.Released, Order(replicas, Request(LeaseOp.Release, _alice, "alice", Start + 6_000), Start + 6_000).Outcome);
        Assert.Equal(LeaseOutcome.Granted, Order(replicas, Request(LeaseOp.Hold, _bob, "bob", Start + 7_000), Start + 7_000).Outcome);
        Assert.All(replicas, r => Assert.Equal(1, r.IdLeasesHeld));
    }

    [Fact]
    public void An_expired_lease_goes_to_the_next_claimant_and_its_old_holder_is_then_told_so()
    {
        var replicas = Replicas();
        Order(replicas, Request(LeaseOp.Hold, _alice, "alice", Start), Start);
        var later = Start + IdLeaseTable.TermMs + 1;
        Assert.Equal(LeaseOutcome.Granted, Order(replicas, Request(LeaseOp.Hold, _bob, "bob", later), later).Outcome);
        var alice = Order(replicas, Request(LeaseOp.Hold, _alice, "alice", later + 1), later + 1);
        Assert.Equal(LeaseOutcome.HeldByOther, alice.Outcome);
        Assert.Equal("bob", alice.Label);
    }

    [Fact]
    public void Forged_stale_replayed_and_strangers_requests_are_refused_and_change_nothing()
    {
        var replicas = Replicas();
        var first = Request(LeaseOp.Hold, _alice, "alice", Start);
        Order(replicas, first, Start);

        using var intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        Assert.Contains("not signed by sender 1's enrolled key", Order(replicas, Request(LeaseOp.Hold, _bob, "bob", Start + 4_000, key: intruder), Start + 4_000).Reason, StringComparison.Ordinal);
        Assert.Contains("sender 9 is not enrolled", Order(replicas, Request(LeaseOp.Hold, _bob, "bob", Start + 4_000, sender: 9, key: intruder), Start + 4_000).Reason, StringComparison.Ordinal);
        Assert.Contains("from the agreed time", Order(replicas, Request(LeaseOp.Hold, _alice, "alice", Start + 4_000 - IdLeaseTable.FreshnessMs - 1), Start + 4_000).Reason, StringComparison.Ordinal);
        // Alice's own first request again, still within the freshness window: a replay.
        Assert.Contains("a replay", Order(replicas, first, Start + 4_001).Reason, StringComparison.Ordinal);
        var malformed = Order(replicas, [.. first[..^1]], Start + 4_002);
        Assert.Equal(LeaseOutcome.Refused, malformed.Outcome);
        Assert.StartsWith("malformed lease request", malformed.Reason, StringComparison.Ordinal);
        // The carrier checks structure and signatures before it carries a request: the forged and the malformed ones
        // count against it, the stranger and the stale one (its directory or clock may differ) do not.
        var weights = new ReplicaSieveOptions().BadSignaturePreSqWeight + new ReplicaSieveOptions().MalformedPreSqWeight;
        // Within a unit of the sum: the counter decays for the 2 ms of agreed time since the forged request.
        Assert.All(replicas, r => Assert.InRange(r.PreSqSuspicion(Carrier), weights - 1, weights));
        Assert.All(replicas, r => Assert.Equal(1, r.Drops[SieveStage.ReplicaAdmission, DropReason.BadSignature]));
        // Alice's lease stands as it was granted: same holder, same expiry.
        var standing = Order(replicas, Request(LeaseOp.Hold, _bob, "bob", Start + 10_000), Start + 10_000);
        Assert.Equal((LeaseOutcome.HeldByOther, "alice", Start + IdLeaseTable.TermMs), (standing.Outcome, standing.Label, standing.ExpiresAtMs));
    }

    [Fact]
    public void Leases_survive_a_snapshot_and_a_restored_replica_decides_like_the_others()
    {
        var replicas = Replicas();
        Order(replicas, Request(LeaseOp.Hold, _alice, "alice on host-a", Start), Start);
        var restored = Replicas()[0];
        restored.RestoreSnapshot(replicas[0].TakeSnapshot());
        Assert.Equal(replicas[0].TakeSnapshot(), restored.TakeSnapshot());
        replicas[3] = restored;
        var held = Order(replicas, Request(LeaseOp.Hold, _bob, "bob", Start + 1_000), Start + 1_000);
        Assert.Equal(LeaseOutcome.HeldByOther, held.Outcome);
        Assert.Equal("alice on host-a", held.Label);
    }

    [Fact]
    public void The_codec_refuses_what_is_not_exactly_a_lease_request()
    {
        var good = Request(LeaseOp.Hold, _alice, "alice", Start);
        Assert.Equal("alice", IdLeaseCodec.DecodeRequest(good).Label);
        Assert.Throws<MalformedEnvelopeException>(() => IdLeaseCodec.DecodeRequest(good.Append((byte)0).ToArray()));
        var badOp = good.ToArray();
        badOp[6] = 9;
        Assert.Throws<MalformedEnvelopeException>(() => IdLeaseCodec.DecodeRequest(badOp));
        var badParty = good.ToArray();
        badParty[1] = 3;
        Assert.Throws<MalformedEnvelopeException>(() => IdLeaseCodec.DecodeRequest(badParty));
        Assert.Throws<ArgumentException>(() => Request(LeaseOp.Hold, _alice, new string('x', IdLeaseCodec.MaxLabelBytes + 1), Start));
        Assert.Throws<ArgumentException>(() => Request(LeaseOp.Hold, _alice, "line\nbreak", Start));
    }
}
