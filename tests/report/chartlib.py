"""Read the charts that `plot` and `report` write: standalone .svg files
(XML) or the inline <svg> elements of the HTML report (html.parser), as a
small element tree with .tag, .attrs, .children and .text."""
from html.parser import HTMLParser
import xml.etree.ElementTree as ET

VOID = {"meta", "input", "br", "img", "link", "hr", "col", "area", "base", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], ""

    def iter(self, tag=None):
        if tag is None or self.tag == tag:
            yield self
        for c in self.children:
            yield from c.iter(tag)

    def find_all(self, tag=None, **attrs):
        """Descendants (and self) whose attributes contain attrs (a class
        value matches any of the space-separated classes)."""
        out = []
        for n in self.iter(tag):
            ok = True
            for k, v in attrs.items():
                k = k.rstrip("_").replace("_", "-")
                have = n.attrs.get(k)
                if k == "class":
                    ok = have is not None and v in have.split()
                else:
                    ok = have == v
                if not ok:
                    break
            if ok:
                out.append(n)
        return out

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text += data


def parse_html(text):
    b = _Builder()
    b.feed(text)
    b.close()
    return b.root


def _from_et(e, parent=None):
    tag = e.tag.split("}", 1)[-1]
    n = Node(tag, e.attrib, parent)
    n.text = e.text or ""
    for c in e:
        n.children.append(_from_et(c, n))
    return n


def parse_svg_file(path):
    """A standalone SVG file; must be well-formed XML."""
    return _from_et(ET.parse(path).getroot())


def bars(svg):
    return svg.find_all(class_="bar")


def lanes(svg):
    return svg.find_all("g", class_="lane")
