using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Replica state machines that pin one administrator key, each with its own key directory (as each replica process
/// has: enrolment changes it), and the ordering of requests to them at increasing agreed times: what the tests of
/// administrator commands share.
/// </summary>
public abstract class AdministeredReplicas : IDisposable
{
    protected const int Carrier = 11;
    private readonly List<IDisposable> _owned = [];
    private long _requestSeq;
    private long _cid;

    protected AdministeredReplicas(TestWorld w) => W = w;

    protected TestWorld W { get; }

    protected ECDsa Admin { get; } = ECDsa.Create(ECCurve.NamedCurves.nistP256);

    protected SieveReplicaApplication ReplicaWith(IApplicationRules rules)
    {
        var key = new AdministratorKey(Admin.ExportSubjectPublicKeyInfo());
        var directory = new PublicKeyDirectory(W.Enrolment);
        _owned.Add(key);
        _owned.Add(directory);
        return new SieveReplicaApplication(directory, new ReplicaSieveOptions(), rules) { Administrator = key };
    }

    protected List<SieveReplicaApplication> ReplicasWith(Func<IApplicationRules> rules) => Enumerable.Range(0, TestWorld.N).Select(_ => ReplicaWith(rules())).ToList();

    protected List<byte[]> Decide(IReadOnlyList<SieveReplicaApplication> replicas, int origin, params byte[][] items)
    {
        var request = TestWorld.Request(origin, ++_requestSeq, items);
        var at = TestWorld.At(++_cid, 1_000 + (_cid * 10));
        return replicas.Select(r => r.Execute(at, [request]).Replies[0]).ToList();
    }

    /// <summary>The command carried by pre-SQ <see cref="Carrier"/>, and the result every replica agreed on.</summary>
    protected AdminCommandResult Order(IReadOnlyList<SieveReplicaApplication> replicas, byte[] command) =>
        TestWorld.AgreedAdminResult(Decide(replicas, Carrier, command));

    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    protected virtual void Dispose(bool disposing)
    {
        if (!disposing)
        {
            return;
        }
        Admin.Dispose();
        foreach (var d in _owned)
        {
            d.Dispose();
        }
    }
}
