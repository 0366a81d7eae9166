namespace SieveQ.AdminUi.Access;

/// <summary>
/// What a console password must be, for every password the account store keeps: the generated ones at account
/// creation (20 characters from a 56-symbol alphabet, which meet it) and the ones users choose when they change theirs.
/// </summary>
public static class PasswordRule
{
    public const int MinLength = 12;
    /// <summary>The sign-in form's bound: a longer password could never be entered.</summary>
    public const int MaxLength = 256;

    public const string Description = "12 to 256 characters, no control characters, not the user name";

    /// <returns>Null when the password is acceptable, otherwise why not.</returns>
    public static string? Check(string user, string password)
    {
        ArgumentNullException.ThrowIfNull(password);
        if (password.Length is < MinLength or > MaxLength)
        {
            return $"a password is {MinLength} to {MaxLength} characters";
        }
        if (password.Any(char.IsControl))
        {
            return "a password has no control characters";
        }
        if (string.Equals(password, user, StringComparison.OrdinalIgnoreCase))
        {
            return "a password is not the user name";
        }
        return null;
    }
}
