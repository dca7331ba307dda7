"""``agent.language`` as rasa-pro 3.22 reads it: an exact BCP 47 tag, or ``x-<tag>-<label>``.

rasa-pro 3.22 warns (``mantle.validation.config.invalid_agent_language``) unless the value
is already in canonical form (case included) and every subtag it knows is registered; a
custom tag ``x-<base>-<label>`` needs a canonical ``<base>`` and any non-empty label.

:func:`tag_problem` answers only where the answer is certain, and is silent otherwise: a
three-letter language subtag is checked against the codes the engine rewrites (``eng``,
``ger`` …) but not against the whole registry, and variant subtags only for their case and
order. The tables were written from the engine's answers on every two- and three-letter
language, every region and every script (see docs/diagnostics page of the code).
"""

from __future__ import annotations

import re

_ALNUM = re.compile(r"[A-Za-z0-9]{1,8}")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# the regular "grandfathered" tags of BCP 47: rasa-pro rewrites them or refuses them
_GRANDFATHERED = _words(
    "art-lojban cel-gaulish no-bok no-nyn zh-guoyu zh-hakka zh-min zh-min-nan zh-xiang"
)
# extended language subtags rasa-pro rewrites into a language of their own (`zh-yue` → `yue`)
_REPLACED_EXTLANGS = _words("zh-cmn zh-gan zh-min zh-wuu zh-yue")

# two-letter language subtags accepted as they are
_LANGUAGES_2 = _words(
    """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu
    cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi
    ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks
    ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl
    nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl
    sm sn so sq sr ss st su sv sw ta te tg th ti tk tn to tr ts tt tw ty ug uk ur uz ve vi
    vo wa wo xh yi yo za zh zu
"""
)

# three-letter language subtags rasa-pro rewrites (to a two-letter or a newer code)
_REPLACED_3 = _words(
    """
    aam aar abk adp afr agp ais aka alb amh ara arg arm asd asm aue ava ave aym ayx aze bak
    bam baq baz bel ben bgm bhk bic bih bis bjd bjq bkb blg bod bos bre btb bul bur cat ccq
    ces cha che chi chu chv cjr cka cmk cnr cor cos coy cqu cre cym cze daf dan dap deu dit
    div djl dkl drh drr drw dud duj dut dwl dzo ell elp eng epo est eus ewe fao fas fij fin
    fra fre fry ful gav gbc geo ger gfx ggn ggo ggr gio gla gle glg gli glv gre grn gti guj
    guv hat hau hbs heb her hin hmo hrr hrv hun hye ibi ibo ice ido iii iku ile ill ilw ina
    ind ipk isl ita izi jar jav jeg jpn kal kan kas kat kau kaz kdv kgc kgd kgh khm kik kin
    kir koj kom kon kor kpp krm ktr kua kur kvs kwq kxe kxl kzh kzj kzt lao lat lav leg lii
    lim lin lit llo lmm ltz lub lug mac mah mal mao mar may meg mgx mkd mlg mlt mnt mof mol
    mon mri msa mst mwd mwj mya myd myt nad nau nav nbf nbl nbx ncp nde ndo nep nld nln nlr
    nno nns nnx nob noo nor nts nxu nya oci oji ori orm oss oun pan pat pcr per pli pmc pmu
    pol por ppa ppr prs pry pus puz que rmr roh ron rum run rus sag san sap sca scc scr sgl
    sin skk slk slo slv sme smo sna snd som sot spa sqi srd srp ssw sul sum sun swa swc swe
    tah tam tat tdu tel tgg tgk tgl tha thc thw thx tib tid tie tir tkk tlw tmp tne tnf ton
    tsf tsn tso tuk tur twi uig ukr unp uok urd uzb ven vie vol wel wgw wit wiw wln wol xba
    xho xia xkh xrq xsj ybd yen yid yiy yma ymt yor yos yuu zha zho zir zul
"""
)

# two-letter region subtags accepted as they are (private-use ranges included)
_REGIONS = _words(
    """
    AA AC AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM
    BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CP CR CU CV CW CX CY
    CZ DE DG DJ DK DM DO DZ EA EC EE EG EH ER ES ET EU EZ FI FJ FK FM FO FR GA GB GD GE GF
    GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU IC ID IE IL IM IN IO IQ IR
    IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA
    MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL
    NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA QM QN QO QP QQ QR QS QT
    QV QW QX QY QZ RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX
    SY SZ TA TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM UN US UY UZ VA VC VE
    VG VI VN VU WF WS XA XB XC XD XE XF XG XH XI XJ XK XL XM XN XO XP XQ XR XS XT XU XV XW
    XX XY XZ YE YT ZA ZM ZW ZZ
"""
)

# three-digit region subtags accepted as they are
_NUMERIC_REGIONS = _words(
    """
    001 002 003 005 009 011 013 014 015 017 018 019 021 029 030 034 035 039 053 054 057 061
    142 143 145 150 151 154 155 202 419
"""
)

# script subtags accepted (title case)
_SCRIPTS = _words(
    """
    Adlm Afak Aghb Ahom Arab Aran Armi Armn Avst Bali Bamu Bass Batk Beng Bhks Blis Bopo
    Brah Brai Bugi Buhd Cakm Cans Cari Cham Cher Chrs Cirt Copt Cpmn Cprt Cyrl Cyrs Deva
    Diak Dogr Dsrt Dupl Egyd Egyh Egyp Elba Elym Ethi Geok Geor Glag Gong Gonm Goth Gran
    Grek Gujr Guru Hanb Hang Hani Hano Hans Hant Hatr Hebr Hira Hluw Hmng Hmnp Hrkt Hung
    Inds Ital Jamo Java Jpan Jurc Kali Kana Khar Khmr Khoj Kitl Kits Knda Kore Kpel Kthi
    Lana Laoo Latf Latg Latn Leke Lepc Limb Lina Linb Lisu Loma Lyci Lydi Mahj Maka Mand
    Mani Marc Maya Medf Mend Merc Mero Mlym Modi Mong Moon Mroo Mtei Mult Mymr Nand Narb
    Nbat Newa Nkdb Nkgb Nkoo Nshu Ogam Olck Orkh Orya Osge Osma Ougr Palm Pauc Pcun Pelm
    Perm Phag Phli Phlp Phlv Phnx Piqd Plrd Prti Psin Qaaa Qaab Qaac Qaad Qaae Qaaf Qaag
    Qaah Qaai Qaaj Qaak Qaal Qaam Qaan Qaao Qaap Qaaq Qaar Qaas Qaat Qaau Qaav Qaaw Qaax
    Qaay Qaaz Qaba Qabb Qabc Qabd Qabe Qabf Qabg Qabh Qabi Qabj Qabk Qabl Qabm Qabn Qabo
    Qabp Qabq Qabr Qabs Qabt Qabu Qabv Qabw Qabx Ranj Rjng Rohg Roro Runr Samr Sara Sarb
    Saur Sgnw Shaw Shrd Shui Sidd Sind Sinh Sogd Sogo Sora Soyo Sund Sylo Syrc Syre Syrj
    Syrn Tagb Takr Tale Talu Taml Tang Tavt Telu Teng Tfng Tglg Thaa Thai Tibt Tirh Tnsa
    Toto Ugar Vaii Visp Vith Wara Wcho Wole Xpeo Xsux Yezi Yiii Zanb Zinh Zmth Zsye Zsym
    Zxxx Zyyy Zzzz
"""
)

# language-script pairs whose script is implied by the language, so rasa-pro drops it
_IMPLIED_SCRIPTS = _words(
    """
    ab-Cyrl af-Latn am-Ethi ar-Arab as-Beng ay-Latn be-Cyrl bg-Cyrl bn-Beng bs-Latn ca-Latn
    ch-Latn cs-Latn cy-Latn da-Latn de-Latn dv-Thaa dz-Tibt el-Grek en-Latn eo-Latn es-Latn
    et-Latn eu-Latn fa-Arab fi-Latn fj-Latn fo-Latn fr-Latn fy-Latn ga-Latn gl-Latn gn-Latn
    gu-Gujr gv-Latn he-Hebr hi-Deva hr-Latn ht-Latn hu-Latn hy-Armn id-Latn is-Latn it-Latn
    ja-Jpan ka-Geor kk-Cyrl kl-Latn km-Khmr kn-Knda ko-Kore la-Latn lb-Latn ln-Latn lo-Laoo
    lt-Latn lv-Latn mg-Latn mh-Latn mk-Cyrl ml-Mlym mr-Deva ms-Latn mt-Latn my-Mymr na-Latn
    nb-Latn nd-Latn ne-Deva nl-Latn nn-Latn no-Latn nr-Latn ny-Latn om-Latn or-Orya pa-Guru
    pl-Latn ps-Arab pt-Latn qu-Latn rm-Latn rn-Latn ro-Latn ru-Cyrl rw-Latn sg-Latn si-Sinh
    sk-Latn sl-Latn sm-Latn so-Latn sq-Latn ss-Latn st-Latn sv-Latn sw-Latn ta-Taml te-Telu
    th-Thai ti-Ethi tn-Latn to-Latn tr-Latn ts-Latn uk-Cyrl ur-Arab ve-Latn vi-Latn xh-Latn
    yi-Hebr zu-Latn dsb-Latn frr-Latn frs-Latn gsw-Latn hsb-Latn kok-Deva mai-Deva men-Latn
    nds-Latn niu-Latn nqo-Nkoo nso-Latn tem-Latn tkl-Latn tmh-Latn tpi-Latn tvl-Latn
    zbl-Blis
"""
)


def tag_problem(tag: str) -> str | None:
    """Why rasa-pro 3.22 warns about ``agent.language: <tag>``; None when it accepts the
    tag, or when we cannot tell. ``tag`` is a non-empty string."""
    if tag.startswith("x-"):
        rest = tag[2:]
        base, _, label = rest.rpartition("-")
        if not base or not label:
            return "a custom language is written `x-<language>-<label>`, e.g. `x-en-pirate`"
        why = _standard_problem(base)
        return f"in the custom language, `{base}`: {why}" if why else None
    return _standard_problem(tag)


def _standard_problem(tag: str) -> str | None:
    if tag.lower() in _GRANDFATHERED:
        return "an old registered tag that has a modern replacement"
    parts = tag.split("-")
    if not all(_ALNUM.fullmatch(p) for p in parts):
        return "subtags are 1 to 8 letters or digits separated by `-`" + (
            " (not `_`)" if "_" in tag else ""
        )
    lang = parts[0]
    if not lang.isalpha() or len(lang) not in (2, 3):
        return "the language comes first, as a two- or three-letter code such as `en` or `yue`"
    fixed = _canonical_case(parts)
    if fixed is None:
        return None  # a shape we do not judge
    if fixed != parts:
        return f"the case matters: write `{'-'.join(fixed)}`"
    if len(lang) == 2 and lang not in _LANGUAGES_2:
        return f"`{lang}` is not a language code"
    if lang in _REPLACED_3:
        return f"`{lang}` is written differently in BCP 47 (e.g. `eng` is `en`)"
    i = 1
    if i < len(parts) and len(parts[i]) == 3 and parts[i].isalpha():
        if f"{lang}-{parts[i]}" in _REPLACED_EXTLANGS:
            return f"write the language `{parts[i]}` on its own"
        i += 1
    if i < len(parts) and len(parts[i]) == 4 and parts[i].isalpha():
        script = parts[i]
        if script not in _SCRIPTS:
            return f"`{script}` is not a script code"
        if f"{lang}-{script}" in _IMPLIED_SCRIPTS:
            return f"`{lang}` implies `{script}`: leave the script out"
        i += 1
    if i < len(parts) and (len(parts[i]) == 2 and parts[i].isalpha()):
        if parts[i] not in _REGIONS:
            return f"`{parts[i]}` is not a region code"
        i += 1
    elif i < len(parts) and len(parts[i]) == 3 and parts[i].isdigit():
        if parts[i] not in _NUMERIC_REGIONS:
            return f"`{parts[i]}` is not a region code rasa-pro keeps"
        i += 1
    variants: list[str] = []
    while i < len(parts) and _is_variant(parts[i]):
        variants.append(parts[i])
        i += 1
    if variants != sorted(set(variants)):
        return "variants are written once each, in alphabetical order"
    singletons: set[str] = set()
    while i < len(parts):
        single = parts[i]
        if len(single) != 1:
            return f"`{single}` is out of place"
        n = i + 1
        while n < len(parts) and (len(parts[n]) >= (1 if single == "x" else 2)):
            if single != "x" and len(parts[n]) == 1:
                break
            n += 1
        if n == i + 1:
            return f"`{single}` must be followed by at least one subtag"
        if single == "x":
            return None
        if single in singletons:
            return f"the extension `{single}` appears twice"
        singletons.add(single)
        i = n
    return None


def _is_variant(part: str) -> bool:
    return 5 <= len(part) <= 8 or (len(part) == 4 and part[0].isdigit())


def _canonical_case(parts: list[str]) -> list[str] | None:
    """The parts in BCP 47's canonical case (language and variants lower case, script
    title case, region upper case, everything after a singleton lower case)."""
    out = [parts[0].lower()]
    tail = False
    for p in parts[1:]:
        if tail or len(p) == 1:
            tail = True
            out.append(p.lower())
        elif len(p) == 4 and p.isalpha():
            out.append(p.title())
        elif len(p) == 2 and p.isalpha():
            out.append(p.upper())
        else:
            out.append(p.lower())
    return out
