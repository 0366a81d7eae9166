{
  "signer": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEeIzySSjY/oOX4Evvt/BQS8eQ1fSt+FMwfsWhTihL/7sfD1aplwacsMmAbg819SPwAX3W5qrTm5d8x8TxET3LNg==",
  "signature": "dFrxTcQCGyOvKpOiPzkwtChKg+aCY953pZjAunTusx9T7EXCd8YolTS9VRuk9klhHRCtlAo2BOew48W4fgHBnw=="
}
