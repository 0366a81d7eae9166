using System.Runtime.InteropServices;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// Sets a variable in the process's native environment, where MIT Kerberos reads KRB5_CONFIG and KRB5CCNAME at each
/// handshake: <see cref="Environment.SetEnvironmentVariable(string, string)"/> changes only .NET's own copy on Linux.
/// </summary>
internal static partial class NativeEnvironment
{
    public static void Set(string name, string value)
    {
        Environment.SetEnvironmentVariable(name, value);
        if (SetEnv(name, value, 1) != 0)
        {
            throw new InvalidOperationException($"setenv {name} failed");
        }
    }

    [LibraryImport("libc", EntryPoint = "setenv", StringMarshalling = StringMarshalling.Utf8)]
    private static partial int SetEnv(string name, string value, int overwrite);
}
