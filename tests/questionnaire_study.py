"""A study file's questionnaires for the tests (English and Portuguese, an attention check), beside
the online tests' two planner conditions. No tests live here."""

from __future__ import annotations

QUESTIONNAIRES = """languages: [en, pt]
attention: {allowed_failures: 0}
questionnaires:
  about:
    title: {en: About you, pt: Sobre si}
    items:
      - {id: age, kind: number, min: 18, max: 99, text: {en: Your age, pt: A sua idade}}
      - id: games
        kind: single
        text: {en: "How often do you play puzzles?", pt: "Com que frequência faz puzzles?"}
        options:
          - {value: never, text: {en: Never, pt: Nunca}}
          - {value: often, text: {en: Often, pt: Muitas vezes}}
        other: {en: Something else, pt: Outra coisa}
      - {id: hello, kind: short_text, required: false, text: {en: "Anything to tell us?", pt: "Algo a dizer-nos?"}}
  partner:
    title: {en: Your partner in this game, pt: O seu parceiro neste jogo}
    order: random
    items:
      - {id: helped, kind: likert, points: 5, scale: help,
         text: {en: My partner helped me., pt: O meu parceiro ajudou-me.},
         ends: [{en: Not at all, pt: Nada}, {en: Very much, pt: Muito}]}
      - {id: hindered, kind: likert, points: 5, scale: help, reverse: true,
         text: {en: My partner got in my way., pt: O meu parceiro atrapalhou-me.},
         ends: [{en: Not at all, pt: Nada}, {en: Very much, pt: Muito}]}
      - {id: effort, kind: slider, scale: effort, text: {en: "How hard did you work?", pt: "Quanto se esforçou?"},
         ends: [{en: Hardly, pt: Pouco}, {en: Very hard, pt: Muito}]}
      - id: check
        kind: single
        correct: blue
        text: {en: "To show you read this, choose Blue.", pt: "Para mostrar que leu, escolha Azul."}
        options:
          - {value: red, text: {en: Red, pt: Vermelho}}
          - {value: blue, text: {en: Blue, pt: Azul}}
  final:
    title: {en: Looking back, pt: Em retrospetiva}
    items:
      - {id: preferred, kind: single, options: partners,
         text: {en: "Whom would you play with again: {partner1} or {partner2}?",
                pt: "Com quem voltaria a jogar: {partner1} ou {partner2}?"}}
      - {id: why, kind: long_text, max_chars: 500, required: false, text: {en: "Why?", pt: "Porquê?"}}
flow:
  before_first: about
  after_each: partner
  after_last: final
"""
