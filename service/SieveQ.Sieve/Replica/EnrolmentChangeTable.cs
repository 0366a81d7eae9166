using System.Text;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Agreed state that enrolment commands change: senders and receivers enrolled through the ordering (with their keys)
/// and ids revoked (static or dynamic, in every role the id had; the id is burned, so an id is never bound to a second
/// key and no cached key, ring or verdict can outlive its party's revocation wrongly). <see cref="Version"/> counts the changes applied, so a pre-SQ that
/// asks for the table can tell whether it changed. Bounded by count (<see cref="ReplicaSieveOptions.MaxEnrolmentChanges"/>)
/// and, through the codec's limits, by bytes (<see cref="MaxEntryBytes"/> each).
/// </summary>
public sealed class EnrolmentChangeTable
{
    /// <summary>The option's upper bound, so the table stays far inside a checkpoint.</summary>
    public const int MaxEntriesLimit = 65_536;

    /// <summary>An entry's worst-case encoding: id, state, name and both keys with their lengths.</summary>
    public const int MaxEntryBytes = 4 + 1 + 12 + EnrolmentProof.MaxNameBytes + (2 * EnrolmentProof.MaxKeyBytes);

    /// <summary>Entries by id, ascending; a null value is a revoked id.</summary>
    public SortedDictionary<int, EnrolledParty?> Entries { get; private init; } = [];

    public long Version { get; set; }

    public int EnrolledCount => Entries.Values.Count(e => e is not null);

    private const byte Revoked = 0;
    private const byte EnrolledSenderState = 1;
    private const byte EnrolledReceiverState = 2;

    /// <summary>Layout: <c>u64 version | u32 n | n x (u32 id | u8 state (0 revoked, 1 sender enrolled, 2 receiver enrolled) | if enrolled: u32 len | name | u32 len | signature SPKI | u32 len | agreement SPKI)</c>, ids ascending.</summary>
    public void WriteTo(CanonicalWriter w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.Seq(Version);
        w.Id(Entries.Count);
        foreach (var (id, e) in Entries)
        {
            w.Id(id);
            WriteEntry(w, e);
        }
    }

    public static void WriteEntry(CanonicalWriter w, EnrolledParty? e)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.U8(e is null ? Revoked : e.Receiver ? EnrolledReceiverState : EnrolledSenderState);
        if (e is not null)
        {
            w.Bytes(Encoding.UTF8.GetBytes(e.Name));
            w.Bytes(e.SignaturePublicKey);
            w.Bytes(e.AgreementPublicKey);
        }
    }

    public static EnrolledParty? ReadEntry(ref CanonicalReader r, int id)
    {
        var state = r.U8("enrolment state");
        if (state > EnrolledReceiverState)
        {
            throw new MalformedEnvelopeException($"enrolment table: state {state} of id {id} is not 0 (revoked), 1 (sender) or 2 (receiver)");
        }
        if (state == Revoked)
        {
            return null;
        }
        string name;
        try
        {
            name = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(r.Bytes(EnrolmentProof.MaxNameBytes, "party name"));
        }
        catch (DecoderFallbackException e)
        {
            throw new MalformedEnvelopeException("enrolment table: a party name is not UTF-8", e);
        }
        var signing = r.Bytes(EnrolmentProof.MaxKeyBytes, "signature public key").ToArray();
        var agreement = r.Bytes(EnrolmentProof.MaxKeyBytes, "agreement public key").ToArray();
        return new EnrolledParty(id, state == EnrolledReceiverState, name, signing, agreement);
    }

    public static EnrolmentChangeTable ReadFrom(ref CanonicalReader r, int maxEntries)
    {
        var table = new EnrolmentChangeTable { Version = r.Seq("enrolment version") };
        var n = r.Count(maxEntries, "enrolment entries");
        var previous = -1;
        for (var i = 0; i < n; i++)
        {
            var id = r.Id("enrolment id");
            if (id <= previous)
            {
                throw new MalformedEnvelopeException("enrolment table: ids not in ascending order");
            }
            previous = id;
            table.Entries.Add(id, ReadEntry(ref r, id));
        }
        return table;
    }
}
