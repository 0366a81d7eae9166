using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;

namespace SieveQ.Fuzz;

/// <summary>
/// <see cref="AdminCommandCodec.Decode"/> as a pre-SQ and the replicas read an administrator command (first byte even),
/// and <see cref="RoutePolicy.RestoreState"/> as a replica reads the route table from a snapshot (odd). Refusal:
/// <see cref="MalformedEnvelopeException"/>. What decodes must be canonical: a command's fields re-encode to its signed
/// region, a route table to its bytes; a refused table leaves the routes as they were.
/// </summary>
internal sealed class AdminCommandTarget : FuzzTarget
{
    private readonly ECDsa _key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly RoutePolicy _routes = new([new Route(1, 100, 64 * 1024)]);

    public override string Name => "admin-command";

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        if (input.Length == 0)
        {
            Refused("empty");
            return;
        }
        ReadOnlyMemory<byte> bytes = input.AsMemory(1);
        try
        {
            if (input[0] % 2 == 0)
            {
                CheckCommand(AdminCommandCodec.Decode(bytes), bytes.Length);
            }
            else
            {
                CheckRouteTable(bytes.Span);
            }
        }
        catch (MalformedEnvelopeException e)
        {
            Refused(e);
        }
    }

    private void CheckCommand(AdminCommand c, int length)
    {
        if (c.SignedRegion.Length + EnvelopeLimits.SignatureBytes != length)
        {
            throw new ContractViolation("a decoded command's signed region and signature are not the whole input");
        }
        byte[] again = c.Op switch
        {
            // SignEnrolment takes only what an enrolment may carry; what decodes beyond that is refused in execution.
            AdminOp.EnrolSender or AdminOp.EnrolReceiver
                when EnrolmentProof.NameProblem(c.Claim!.Name) is null && !c.Claim.SignaturePublicKey.IsEmpty && !c.Claim.AgreementPublicKey.IsEmpty
                => AdminCommandCodec.SignEnrolment(c.Op, c.Target, c.Nonce, c.Claim, _key),
            AdminOp.EnrolSender or AdminOp.EnrolReceiver => [.. c.SignedRegion.Span],
            AdminOp.AllowRoute or AdminOp.RemoveRoute => AdminCommandCodec.SignRoute(c.Op, c.Target, c.RouteReceiver, c.RouteMaxBytes, c.Nonce, _key),
            _ => AdminCommandCodec.Sign(c.Op, c.Target, c.Nonce, _key),
        };
        if (!again.AsSpan(0, c.SignedRegion.Length).SequenceEqual(c.SignedRegion.Span))
        {
            throw new ContractViolation($"a decoded command (op {c.Op}) re-encodes to a different signed region");
        }
    }

    private void CheckRouteTable(ReadOnlySpan<byte> state)
    {
        var before = _routes.SnapshotState();
        try
        {
            _routes.RestoreState(state);
        }
        catch (MalformedEnvelopeException)
        {
            if (!_routes.SnapshotState().AsSpan().SequenceEqual(before))
            {
                throw new ContractViolation("a refused route table changed the routes");
            }
            throw;
        }
        if (!_routes.SnapshotState().AsSpan().SequenceEqual(state))
        {
            throw new ContractViolation("a restored route table re-encodes differently");
        }
    }

    public override IEnumerable<byte[]> Seeds()
    {
        yield return [0, .. AdminCommandCodec.Sign(AdminOp.QuarantineSender, 3, 1, _key)];
        using var signing = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var agreement = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var (spki, agreeSpki) = (signing.ExportSubjectPublicKeyInfo(), agreement.ExportSubjectPublicKeyInfo());
        yield return [6, .. AdminCommandCodec.SignEnrolment(0, 4, new PartyEnrolmentClaim("branch-7", spki, agreeSpki,
            EnrolmentProof.Sign("branch-7", spki, agreeSpki, signing)), _key)];
        yield return [2, .. AdminCommandCodec.SignRoute(AdminOp.AllowRoute, 1, 101, 4096, 2, _key)];
        yield return [4, .. AdminCommandCodec.SignRoute(AdminOp.RemoveRoute, 1, 100, 0, 3, _key)];
        var routes = new RoutePolicy([]);
        routes.Allow(1, 100, 10);
        routes.Allow(2, 101, 65_536);
        yield return [1, .. routes.SnapshotState()];
    }
}
