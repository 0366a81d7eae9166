namespace SieveQ.Bft.Core;

public enum ReplicaMode
{
    /// <summary>Ordering under a settled leader.</summary>
    Normal,
    /// <summary>Collecting STOP / STOPDATA / SYNC for a new regency; normal-case messages are set aside.</summary>
    RegencyChange,
}
