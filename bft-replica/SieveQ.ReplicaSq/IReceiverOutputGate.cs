using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Whether a replica-SQ sends a receiver what it owes it: its output frames (digest votes, and bodies where it is the
/// designated replica or re-sends) and its answers to body fetches. The product always does (no gate); the fault
/// tests plug in a compromised replica-SQ that orders honestly and goes silent towards receivers, from their own
/// project, so the shipped binary has no switch that makes it withhold.
/// </summary>
public interface IReceiverOutputGate
{
    /// <summary>False: none of this agreed batch's frames go out (neither its votes nor its bodies).</summary>
    bool Sends(OutboxBatch agreed);

    /// <summary>False: an authenticated body fetch from this receiver gets no answer; the call is held until the receiver gives up.</summary>
    bool Answers(int receiver);
}
