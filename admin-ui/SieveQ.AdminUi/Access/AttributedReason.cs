using System.Security.Claims;
using SieveQ.Controller;
using SieveQ.Controller.Audit;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// The reason the console sends the controller with a change: the text from the form after the console user who asked
/// and the address they asked from (<see cref="ConsoleCaller"/>; the controller sees the console as one caller, so the
/// user is named here). The controller takes reasons of up to <see cref="ManagementApi.MaxReasonLength"/> characters
/// with that attribution included, so a form takes what is left after the longest one: a reason the form accepts is
/// never refused at the controller for its length.
/// </summary>
public static class AttributedReason
{
    /// <summary>
    /// The longest console user name: a Kerberos principal of <see cref="WindowsSignInConfig.MaxNameLength"/> characters
    /// after "kerberos:". Local accounts (64), OpenID Connect users ("oidc:" and 64) and Windows accounts ("windows:" and 64) are shorter.
    /// </summary>
    public static readonly int MaxUserNameLength = "kerberos:".Length + WindowsSignInConfig.MaxNameLength;

    /// <summary>The longest attribution: the longest name from the longest address.</summary>
    public static readonly ConsoleCaller LongestCaller = new(new string('u', MaxUserNameLength), new string('a', AuditAddress.MaxChars));

    /// <summary>The longest text a reason field takes: the controller's limit less the longest attribution.</summary>
    public static readonly int MaxTextLength = ManagementApi.MaxReasonLength - Of(LongestCaller, "").Length;

    /// <summary>Who a request is attributed to.</summary>
    public static ConsoleCaller UserOf(ClaimsPrincipal user) => ConsoleCaller.Of(user);

    /// <summary>The reason as the controller gets it.</summary>
    public static string Of(ConsoleCaller caller, string text)
    {
        ArgumentNullException.ThrowIfNull(caller);
        return $"{caller}: {text}";
    }

    /// <summary>Why the form's (trimmed) text cannot be sent for this caller, or null when it can.</summary>
    public static string? Problem(ConsoleCaller caller, string text)
    {
        ArgumentNullException.ThrowIfNull(caller);
        ArgumentNullException.ThrowIfNull(text);
        if (text.Length > MaxTextLength || text.Any(char.IsControl))
        {
            return $"the reason is at most {MaxTextLength} characters, without control characters";
        }
        var room = ManagementApi.MaxReasonLength - Of(caller, "").Length;
        return text.Length > room
            ? $"the reason is at most {Math.Max(room, 0)} characters for the user name '{caller.Name}' (the controller keeps {ManagementApi.MaxReasonLength} with the name)"
            : null;
    }
}
