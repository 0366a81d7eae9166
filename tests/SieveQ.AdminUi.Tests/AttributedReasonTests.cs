using SieveQ.AdminUi.Access;
using SieveQ.Controller;
using SieveQ.Controller.Audit;

namespace SieveQ.AdminUi.Tests;

/// <summary>The console's reasons fit the controller's limit with the console user's name and address in front of them.</summary>
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

    /// <summary>The longest address text a connection gives, and none (a caller the transformation did not see).</summary>
    private static readonly string?[] LongestAddresses = [new string('a', AuditAddress.MaxChars), "192.0.2.7", null];

    private static ConsoleCaller Olga => new("olga", null);

    [Fact]
    public void The_longest_name_of_every_sign_in_from_the_longest_address_fits_with_a_reason_of_the_forms_full_length()
    {
        Assert.True(ConsoleUserStore.IsValidName(LongestNames[0]));
        Assert.False(ConsoleUserStore.IsValidName(LongestNames[0] + "l"));
        Assert.True(WindowsSignInConfig.IsPrincipal(LongestNames[2]["kerberos:".Length..]));
        Assert.True(WindowsSignInConfig.IsPrincipal(LongestNames[3]["windows:".Length..]));
        Assert.Equal(AttributedReason.MaxUserNameLength, LongestNames.Max(n => n.Length));
        var text = new string('r', PartyActions.MaxReasonLength);
        foreach (var caller in LongestNames.SelectMany(n => LongestAddresses.Select(a => new ConsoleCaller(n, a))))
        {
            Assert.Null(AttributedReason.Problem(caller, text));
            Assert.InRange(AttributedReason.Of(caller, text).Length, 1, ManagementApi.MaxReasonLength);
        }
        // No room left unused: the longest name from the longest address takes the controller's limit exactly.
        Assert.Equal(ManagementApi.MaxReasonLength, AttributedReason.Of(new ConsoleCaller(LongestNames[2], LongestAddresses[0]), text).Length);
        // And a reason field still takes a sentence or two.
        Assert.InRange(PartyActions.MaxReasonLength, 150, ManagementApi.MaxReasonLength);
        Assert.Equal("console user 'olga': flooding", AttributedReason.Of(Olga, "flooding"));
        Assert.Equal("console user 'olga' from 192.0.2.7: flooding", AttributedReason.Of(Olga with { From = "192.0.2.7" }, "flooding"));
    }

    [Fact]
    public void A_longer_text_or_a_control_character_is_refused_at_the_form()
    {
        Assert.Equal($"the reason is at most {PartyActions.MaxReasonLength} characters, without control characters",
            AttributedReason.Problem(Olga, new string('r', PartyActions.MaxReasonLength + 1)));
        Assert.NotNull(AttributedReason.Problem(Olga, "line\nbreak"));
        Assert.Null(AttributedReason.Problem(Olga, ""));
    }

    [Fact]
    public void A_name_longer_than_any_sign_in_gives_is_refused_at_the_form_with_the_room_it_leaves()
    {
        var caller = new ConsoleCaller(new string('n', AttributedReason.MaxUserNameLength + 10), new string('a', AuditAddress.MaxChars));
        Assert.Null(AttributedReason.Problem(caller, new string('r', PartyActions.MaxReasonLength - 10)));
        var problem = AttributedReason.Problem(caller, new string('r', PartyActions.MaxReasonLength));
        Assert.Equal($"the reason is at most {PartyActions.MaxReasonLength - 10} characters for the user name '{caller.Name}' (the controller keeps {ManagementApi.MaxReasonLength} with the name)", problem);
    }
}
