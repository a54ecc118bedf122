"""The plugin's help pages (the Qt help file ParaView shows for the "?" button) as a user
sees them: one page per filter, the cell-id formula as written, no stray emphasis and no
characters the help browser misreads.

ParaView 5.11 builds the pages from the server-manager XML: it splits its HTML output into
pages at list separators, so one unbalanced "[" in the documentation (a half-open interval)
glued every later filter's page into the first one; its pages carry no charset, so the help
browser reads them as Latin-1 (a UTF-8 "x" sign showed as "A~"); "*" turns into emphasis.

    python3 test_help_pages.py SOURCE_DIR BUILD_HELP_DIR
"""
import glob
import os
import re
import sqlite3
import sys
import zlib

source, help_dir = sys.argv[1], sys.argv[2]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


# the XML the pages come from
for path in sorted(glob.glob(os.path.join(source, "xml", "*.xml"))):
    text = open(path, "rb").read()
    name = os.path.basename(path)
    check(all(b < 128 for b in text), "%s: non-ASCII characters (the help browser reads pages as Latin-1)" % name)
    check(text.count(b"[") == text.count(b"]"), "%s: unbalanced [ ] (ParaView then glues the help pages)" % name)

# the pages in the Qt help file
pages = {}
database = sqlite3.connect(os.path.join(help_dir, "PHEW.qch"))
names = dict(database.execute("SELECT FileId, Name FROM FileNameTable"))
for file_id, data in database.execute("SELECT Id, Data FROM FileDataTable"):
    if data is None:
        continue
    blob = bytes(data)
    try:
        pages[names.get(file_id, "")] = zlib.decompress(blob[4:])  # Qt's qCompress: size, then zlib
    except zlib.error:
        pages[names.get(file_id, "")] = blob
for proxy in ("PHEWClumpFinder", "PHEWParticleDensity", "PHEWFriendsOfFriends", "PHEWHOPHaloFinder", "PHEWMergerTree"):
    page = pages.get("filters.%s.html" % proxy)
    check(page is not None, "no help page for %s (pages: %s)" % (proxy, sorted(pages)))
    if page is None:
        continue
    check(page.count(b"<html>") == 1, "%s: %d pages glued together" % (proxy, page.count(b"<html>")))
    check(all(b < 128 for b in page), "%s: non-ASCII characters in the page" % proxy)
    check(b"<em>" not in page, "%s: stray emphasis: %s" % (proxy, re.findall(rb"<em>[^<]*</em>", page)[:3]))
clump_page = pages.get("filters.PHEWClumpFinder.html", b"")
check(b"ix + nx (iy + ny iz)" in clump_page, "PHEWClumpFinder: the cell-id formula is not as written")

for message in failures:
    print("FAIL: " + message)
print("help pages: %d pages, %s" % (len(pages), "%d failures" % len(failures) if failures else "all checks passed"))
sys.exit(1 if failures else 0)
