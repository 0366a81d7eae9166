namespace SieveQ.AdminUi.Access;

/// <summary>A console user's role; each includes the ones below it.</summary>
public enum ConsoleRole
{
    Viewer = 1,
    Operator = 2,
    Administrator = 3,
}

/// <summary>The authorization policies every page, endpoint and handler names; a policy admits its role and those above.</summary>
public static class ConsolePolicies
{
    public const string Viewer = "viewer";
    public const string Operator = "operator";
    public const string Administrator = "administrator";

    public static string RoleName(ConsoleRole role) => role.ToString().ToLowerInvariant();

    /// <summary>The role names a policy for <paramref name="least"/> admits.</summary>
    public static string[] RolesFrom(ConsoleRole least) =>
        Enum.GetValues<ConsoleRole>().Where(r => r >= least).Select(RoleName).ToArray();
}
