"""Issue 14 item 4: a password of random letters of another alphabet (Cyrillic, Greek) in
both cases, given to a password option or written after "the password is", is masked as
random ASCII letters there are; words of those scripts (lower, Capitalized, UPPER, CamelCase
of words and abbreviations) stay readable. The English letter pairs of the bare anomalies
cannot judge these letters: a case change inside a word can (words of any script are lower,
Capitalized or upper; random letters change case once every two or three letters)."""

from __future__ import annotations

import random

import pytest

from memex.core import redact

FORMS = ["mysql --password {}", "mysql --password={}", "nuget add -Password {} -Source x",
         "the password is {}", "the deploy password is {} for now"]
ALPHABETS = {"cyrillic": "абвгдежзийклмнопрстуфхцчшщыэюя",
             "greek": "αβγδεζηθικλμνξοπρστυφχψω"}


def _random_letters(alphabet: str, rng: random.Random) -> str:
    letters = [rng.choice(alphabet) for _ in range(rng.randint(12, 20))]
    return "".join(c.upper() if rng.random() < 0.5 else c for c in letters)


@pytest.mark.parametrize("script", sorted(ALPHABETS))
@pytest.mark.parametrize("form", FORMS)
def test_random_letters_of_another_alphabet_are_masked(script: str, form: str) -> None:
    rng = random.Random(f"{script}{form}")
    values = [_random_letters(ALPHABETS[script], rng) for _ in range(60)]
    masked = 0
    for value in values:
        out = redact.redact(form.format(value)).text
        masked += value not in out and value[:4] in out
    assert masked >= 45, masked  # main: 0 of 60


@pytest.mark.parametrize("value", [
    "ЖщЫкпрьФдлВгЮц", "ξΨζΚλΜνΠρΣτΥφ", "пРиВеТмИрДрУг", "ΑβΓδΕζΗθΙκΛμ"])
@pytest.mark.parametrize("form", FORMS)
def test_a_random_password_of_another_alphabet(value: str, form: str) -> None:
    out = redact.redact(form.format(value)).text
    assert value not in out


READABLE = ["Пароль", "пароль", "ПАРОЛЬ", "Контрольная", "широковещательный", "ЗАПИСЬ",
            "Συνθηματικό", "ΚωδικόςΠρόσβασης", "ακεραιότητα", "ΤΕΧΝΗΤΈΣ", "РозмФайлРозмПам",
            "ДеСКриптор", "ЈаваФИкс", "ГТестДмагистралом", "ММДДччММ", "ПарольПользователя",
            "МойСекретныйПароль", "НовыйПарольАдминистратора", "ΝέοςΚωδικόςΔιαχειριστή",
            "АБВГДЂШЖЧЋЉЊЏ", "зөвшөөрөгдсөнгүй", "Түркмөнстан", "мій_пароль_тут",
            "пароль-по-умолчанию"]


@pytest.mark.parametrize("word", READABLE)
@pytest.mark.parametrize("form", FORMS)
def test_words_of_another_alphabet_stay_readable(word: str, form: str) -> None:
    text = form.format(word)
    assert redact.redact(text).text == text
