using System.Runtime.InteropServices;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Gives MIT Kerberos the console's keytab for accepting tickets. Setting KRB5_KTNAME from .NET would not reach the
/// native library (.NET keeps its own copy of the environment), so the keytab is registered with the library's own
/// call, the one Apache's GSSAPI module uses. An environment variable set before the process starts still works.
/// </summary>
public static partial class KerberosKeytab
{
    public static void Use(WindowsSignInConfig? windows)
    {
        if (windows?.Keytab is not { } keytab || !OperatingSystem.IsLinux())
        {
            return;
        }
        uint major;
        try
        {
            major = RegisterAcceptorIdentity(keytab);
        }
        catch (DllNotFoundException e)
        {
            throw new DeploymentException("windowsSignIn needs MIT Kerberos's GSSAPI library (Debian: libgssapi-krb5-2)", e);
        }
        if (major != 0)
        {
            throw new DeploymentException($"windowsSignIn.keytab was not accepted by the Kerberos library (GSS major status {major})");
        }
    }

    [LibraryImport("libgssapi_krb5.so.2", EntryPoint = "krb5_gss_register_acceptor_identity", StringMarshalling = StringMarshalling.Utf8)]
    private static partial uint RegisterAcceptorIdentity(string keytab);
}
