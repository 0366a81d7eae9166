using System.Security.Cryptography;
using SieveQ.Deployment;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// Before a sender or receiver starts: its id must be in the deployment's enrolment, with the signing key it holds.
/// Otherwise every pre-SQ would drop its frames (or every replica its acknowledgements) without a word to it.
/// </summary>
internal static class EnrolmentCheck
{
    public static void Sender(DeploymentContext ctx, int id, ECDsa signing) =>
        Check("sender", id, ctx.Enrolment.Senders.FirstOrDefault(s => s.Id == id)?.SignaturePublicKey, signing);

    public static void Receiver(DeploymentContext ctx, int id, ECDsa signing) =>
        Check("receiver", id, ctx.Enrolment.Receivers.FirstOrDefault(r => r.Id == id)?.SignaturePublicKey, signing);

    private static void Check(string role, int id, byte[]? enrolled, ECDsa signing)
    {
        if (enrolled is null)
        {
            throw new DeploymentException($"{role} {id} is not enrolled in this deployment: every message of it would be dropped; enrol it first");
        }
        if (!CryptographicOperations.FixedTimeEquals(enrolled, signing.ExportSubjectPublicKeyInfo()))
        {
            throw new DeploymentException($"the signing key found for {role} {id} is not the one its enrolment pins: every signature would be refused");
        }
    }
}
