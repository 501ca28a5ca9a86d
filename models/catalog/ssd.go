package catalog

var ssdDrives = []Drive{}
