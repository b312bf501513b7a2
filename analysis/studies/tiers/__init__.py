"""The tier study (spec key `tiers`): each finding under every strategy tier (report.py), the paired
gaps to the strongest tier (gaps.py), and measured strength from head-to-head duels (duels.py,
strength.py)."""
