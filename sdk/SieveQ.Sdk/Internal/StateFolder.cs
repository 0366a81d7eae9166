namespace SieveQ.Sdk.Internal;

/// <summary>
/// Opens a party's exclusive state file and turns "another process or sender has it open" into a configuration error
/// that says so, instead of the platform's file-sharing error.
/// </summary>
internal static class StateFolder
{
    // Windows' ERROR_SHARING_VIOLATION; on Unix .NET takes an advisory lock (flock) and reports its EWOULDBLOCK
    // (11 on Linux, 35 on macOS) as the HResult.
    private const int SharingViolation = unchecked((int)0x80070020);
    private const int LinuxWouldBlock = 11;
    private const int MacWouldBlock = 35;

    public static T OpenExclusive<T>(Func<T> open, string party, int id, string stateDir)
    {
        try
        {
            return open();
        }
        catch (IOException e) when (e.HResult is SharingViolation or LinuxWouldBlock or MacWouldBlock)
        {
            throw new SieveQConfigurationException(
                $"{party} {id}: its state folder {Path.GetFullPath(stateDir)} is in use by another {party} {id}, in this process or another; "
                + "one sender or receiver per id and state folder at a time (dispose the other first, or give this one its own folder)", e);
        }
    }
}
