using SieveQ.AdminUi.Access;
using SieveQ.Controller;

namespace SieveQ.AdminUi.Tests;

/// <summary>The console's reasons fit the controller's limit with the console user's name in front of them.</summary>
public sealed class AttributedReasonTests
{
    /// <summary>The longest name each sign-in gives a console user.</summary>
    private static readonly string[] LongestNames =
    [
        new string('l', 64),
        OidcSignIn.NamePrefix + new string('o', 64),
        NegotiateSignIn.ConsoleName(new string('k', WindowsSignInConfig.MaxNameLength - "@EXAMPLE.ORG".Length) + "@EXAMPLE.ORG"),
        NegotiateSignIn.ConsoleName("EXAMPLE\\" + new string('w', WindowsSignInConfig.MaxNameLength - "EXAMPLE\\".Length)),
    ];

    [Fact]
    public void The_longest_name_of_every_sign_in_fits_with_a_reason_of_the_forms_full_length()
    {
        Assert.True(ConsoleUserStore.IsValidName(LongestNames[0]));
        Assert.False(ConsoleUserStore.IsValidName(LongestNames[0] + "l"));
        Assert.True(WindowsSignInConfig.IsPrincipal(LongestNames[2]["kerberos:".Length..]));
        Assert.True(WindowsSignInConfig.IsPrincipal(LongestNames[3]["windows:".Length..]));
        Assert.Equal(AttributedReason.MaxUserNameLength, LongestNames.Max(n => n.Length));
        var text = new string('r', PartyActions.MaxReasonLength);
        foreach (var name in LongestNames)
        {
            Assert.Null(AttributedReason.Problem(name, text));
            Assert.InRange(AttributedReason.Of(name, text).Length, 1, ManagementApi.MaxReasonLength);
        }
        // No room left unused: the longest name takes the controller's limit exactly.
        Assert.Equal(ManagementApi.MaxReasonLength, AttributedReason.Of(LongestNames[2], text).Length);
        Assert.Equal("console user 'olga': flooding", AttributedReason.Of("olga", "flooding"));
    }

    [Fact]
    public void A_longer_text_or_a_control_character_is_refused_at_the_form()
    {
        Assert.Equal($"the reason is at most {PartyActions.MaxReasonLength} characters, without control characters",
            AttributedReason.Problem("olga", new string('r', PartyActions.MaxReasonLength + 1)));
        Assert.NotNull(AttributedReason.Problem("olga", "line\nbreak"));
        Assert.Null(AttributedReason.Problem("olga", ""));
    }

    [Fact]
    public void A_name_longer_than_any_sign_in_gives_is_refused_at_the_form_with_the_room_it_leaves()
    {
        var name = new string('n', AttributedReason.MaxUserNameLength + 10);
        Assert.Null(AttributedReason.Problem(name, new string('r', PartyActions.MaxReasonLength - 10)));
        var problem = AttributedReason.Problem(name, new string('r', PartyActions.MaxReasonLength));
        Assert.Equal($"the reason is at most {PartyActions.MaxReasonLength - 10} characters for the user name '{name}' (the controller keeps 200 with the name)", problem);
    }
}
